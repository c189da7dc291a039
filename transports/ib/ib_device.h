// The RDMA device a rank uses: among the devices of the verbs list with an
// active port (filtered by WEFT_IB_HCA), the one topo/rank_nic.h picks (the
// GPU's nearest NIC, or one local to the rank's CPUs, ranks of a node spread
// over equal ones), its first active port, and the address peers reach it by:
// the LID on InfiniBand; on RoCE a GID chosen from the port's GID table (a
// valid, non-link-local RoCE v2 GID, IPv4-mapped first) unless
// WEFT_IB_GID_INDEX names one. "No RDMA here" (no device list, ENOSYS, no
// active port) is not an error: open() returns weftSuccess with ok() false and
// a reason, and the communicator uses TCP.
//
// With WEFT_IB_RDMACM=1 the device is chosen the same way, but its context is
// then the one librdmacm opened itself (rdma_get_devices(), matched by name):
// rdma_create_qp() only accepts a PD of the rdma_cm id's own context, so the
// PD, CQs and MRs must all live there. librdmacm opens those contexts inside
// its own library, so a link-time --wrap of ibv_open_device (the test fault
// injector, tests/rdma-vm/ib_fault_inject.cc) does not see them.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

class IbDevice {
 public:
  ~IbDevice();
  // localIndex/localRanks: this rank among its node's, to spread ranks over
  // equally near devices (topo/rank_nic.h).
  // `rdmacm`: take the context from librdmacm (above).
  weftResult_t open(int localIndex, int localRanks, bool rdmacm = false);
  bool ok() const { return pd_ != nullptr; }
  const std::string& whyNot() const { return whyNot_; }

  ibv_context* context() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  int port() const { return port_; }
  bool roce() const { return linkLayer_ == IBV_LINK_LAYER_ETHERNET; }
  uint16_t lid() const { return lid_; }
  int gidIndex() const { return gidIndex_; }
  const ibv_gid& gid() const { return gid_; }
  ibv_mtu mtu() const { return mtu_; }
  const std::string& name() const { return name_; }
  // Why this device (for WEFT_DEBUG=INFO), and the CPUs near it or near this
  // rank's GPU ("" when unknown), where the progress thread belongs.
  const std::string& choiceReason() const { return choiceReason_; }
  const std::string& nearCpus() const { return nearCpus_; }
  // "rxe0:1 RoCE v2 GID[1] ::ffff:10.0.0.1 MTU 1024" for logs.
  std::string describe() const;

 private:
  weftResult_t pickGid();
  weftResult_t useRdmacmContext();
  int choose(const std::vector<std::string>& names, int localIndex, int localRanks);

  ibv_context* ctx_ = nullptr;
  ibv_context** cmList_ = nullptr;  // rdma_get_devices(); ctx_ is one of them then
  ibv_pd* pd_ = nullptr;
  std::string name_;
  std::string whyNot_;
  std::string choiceReason_;
  std::string nearCpus_;
  int port_ = 1;
  uint8_t linkLayer_ = IBV_LINK_LAYER_INFINIBAND;
  uint16_t lid_ = 0;
  int gidIndex_ = -1;
  ibv_gid gid_{};
  ibv_mtu mtu_ = IBV_MTU_1024;
};

}  // namespace weft
