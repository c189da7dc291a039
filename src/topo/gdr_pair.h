// Whether one GPU and one NIC may use GPUDirect RDMA, as the GPU ring's proxy
// asks it for the NIC the verbs transport actually uses (which may not be the
// GPU's nearest: WEFT_IB_HCA, a port down). On when both are in the topology,
// neither is marked gdr=0 (NCCL files), and their path class is within
// WEFT_NET_GDR_LEVEL (the topology's options); else off, with the reason.
// Pure: tested on real topology files.
#pragma once

#include <string>

#include "topo/topology.h"

namespace weft::topo {

struct GdrChoice {
  bool on = false;
  std::string reason;  // "on: PIX is within WEFT_NET_GDR_LEVEL=PXB", "off: ..."
};

// `gpu`: PCI bus id or OS name; `nic`: verbs device name. `topo` may be null
// (then `topoWhyNot` says why there is none).
GdrChoice gdrForPair(const Topology* topo, const std::string& topoWhyNot, const std::string& gpu,
                     const std::string& nic);

}  // namespace weft::topo
