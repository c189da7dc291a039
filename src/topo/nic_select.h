// Each GPU's NIC. For every GPU, the usable RDMA NICs (WEFT_IB_HCA applied)
// are ranked by bottleneck PCIe bandwidth (within kBandwidthTolerance of the
// best counts as equal), then path class, then (inside a switch tree, PIX or
// PXB) bridges crossed; whatever is left tied is the GPU's tie set. GPUs are then given NICs from
// their tie sets so that tied GPUs spread evenly: most constrained GPU first, each taking the
// least-used adapter, then the least-used port, then the first in bus order.
// GPUDirect RDMA is allowed when the pair's class is within the GDR level.
#pragma once

#include <string>
#include <vector>

#include "topo/hca_filter.h"
#include "topo/paths.h"

namespace weft::topo {

// Bandwidths at least this fraction of the best are equal: link speeds in
// topology dumps carry rounding and power-saving noise (31.0 vs 31.5 GB/s).
constexpr double kBandwidthTolerance = 0.9;

struct SelectOptions {
  PathClass gdrLevel = PathClass::kPXB;  // WEFT_NET_GDR_LEVEL
  HcaFilter hcaFilter;                   // WEFT_IB_HCA
};

struct GpuNic {
  int nic = -1;           // index into Machine::nics; -1 = this GPU has no usable RDMA NIC
  PathInfo path;          // GPU -> that NIC
  std::vector<int> tied;  // every equally near NIC (includes `nic`), in bus order
  bool gdr = false;
  std::string reason;     // why this NIC (class, bandwidth, how a tie was broken)
  std::string gdrReason;  // why GDR is on or off
};

// One entry per Machine::gpus entry, same order.
std::vector<GpuNic> chooseNics(const Machine& m, const SelectOptions& options);

}  // namespace weft::topo
