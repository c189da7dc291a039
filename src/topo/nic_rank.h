// How one GPU ranks the usable RDMA NICs, before GPUs are weighed against
// each other (nic_select.h does that). Path class comes first: a NIC behind
// the GPU's own switch beats a faster one across the CPU, because the far
// path crosses the host bridge (and maybe the socket link) and cannot use
// GPUDirect RDMA at the default level. Bandwidth and bridge count only order
// NICs of one class.
#pragma once

#include <string>
#include <vector>

#include "topo/paths.h"

namespace weft::topo {

// Bandwidths at least this fraction of the best are equal: link speeds in
// topology dumps carry rounding and power-saving noise (31.0 vs 31.5 GB/s).
constexpr double kBandwidthTolerance = 0.9;

struct NicCandidate {
  int nic;  // index into Machine::nics
  PathInfo path;
};

// The candidates of the nearest class in `all`, in the order given: the
// GPU's near NICs.
std::vector<NicCandidate> nearestClass(const std::vector<NicCandidate>& all);

// Narrows `pool` (near NICs, all of one class) to those the GPU prefers:
// bottleneck bandwidth within kBandwidthTolerance of the best (compared only
// when every speed in the pool is known), then, inside a switch tree (PIX,
// PXB), fewest bridges. `why` gets the rule that decided, naming a faster NIC
// that lost on class; `all` is every usable NIC, for that sentence.
std::vector<NicCandidate> preferredNics(const Machine& m, const std::vector<NicCandidate>& all,
                                        const std::vector<NicCandidate>& pool, std::string* why);

// "mlx5_0 (PIX, 31.5 GB/s, 3 bridges)"
std::string describeCandidate(const Machine& m, const NicCandidate& c);
std::string gbpsText(double gbps);
std::string bridgesText(int n);

}  // namespace weft::topo
