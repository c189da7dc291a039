// Each GPU's NIC, over all GPUs of the machine at once, so that every rank
// computes the same answer. For every GPU the usable RDMA NICs (WEFT_IB_HCA
// applied) are ranked by nic_rank.h: its near NICs are those of the nearest
// path class. Then:
//   1. a GPU never takes a NIC on an adapter that another GPU has as its only
//      near adapter, unless all its near NICs are such (then it shares). A GPU
//      left with one adapter this way needs it as much, so the rule repeats
//      until nothing changes;
//   2. among what is left, bandwidth then (inside a switch tree) bridges
//      decide; what is still equal is the GPU's tie set;
//   3. GPUs take NICs from their tie sets, most constrained GPU first, each
//      taking the least-used adapter, then the least-used port, then the first
//      in bus order, so tied GPUs spread evenly.
// GPUDirect RDMA is allowed when the chosen pair's class is within the GDR level.
#pragma once

#include <string>
#include <vector>

#include "topo/hca_filter.h"
#include "topo/nic_rank.h"

namespace weft::topo {

struct SelectOptions {
  PathClass gdrLevel = PathClass::kPXB;  // WEFT_NET_GDR_LEVEL
  HcaFilter hcaFilter;                   // WEFT_IB_HCA
};

struct GpuNic {
  int nic = -1;           // index into Machine::nics; -1 = this GPU has no usable RDMA NIC
  PathInfo path;          // GPU -> that NIC
  std::vector<int> tied;  // the tie set the NIC was spread over (includes `nic`), in bus order
  bool gdr = false;
  std::string reason;     // why this NIC (class, bandwidth, NICs left to other GPUs, ties)
  std::string gdrReason;  // why GDR is on or off
};

// One entry per Machine::gpus entry, same order.
std::vector<GpuNic> chooseNics(const Machine& m, const SelectOptions& options);

}  // namespace weft::topo
