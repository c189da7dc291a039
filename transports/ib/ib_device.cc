// See ib_device.h.
#include "transports/ib/ib_device.h"

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "topo/hca_filter.h"
#include "topo/rank_nic.h"

namespace weft {

IbDevice::~IbDevice() {
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
  if (cmList_ != nullptr)
    rdma_free_devices(cmList_);  // librdmacm owns (and closes) its contexts
  else if (ctx_ != nullptr)
    ibv_close_device(ctx_);
}

weftResult_t IbDevice::open(int localIndex, int localRanks, bool rdmacm) {
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n == 0) {
    whyNot_ =
        list == nullptr && errno == ENOSYS ? "the kernel has no RDMA support" : "no RDMA device";
    if (list != nullptr) ibv_free_device_list(list);
    return weftSuccess;
  }
  // Every device with an active port that WEFT_IB_HCA allows (its first such
  // port), kept open until one is chosen.
  struct Candidate {
    std::string name;
    ibv_context* ctx;
    int port;
    ibv_port_attr attr;
  };
  std::vector<Candidate> found;
  topo::HcaFilter filter(configString("WEFT_IB_HCA"));
  for (int i = 0; i < n; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    ibv_context* ctx = ibv_open_device(list[i]);
    if (ctx == nullptr) continue;
    ibv_device_attr dev{};
    bool taken = false;
    for (int p = 1; ibv_query_device(ctx, &dev) == 0 && p <= dev.phys_port_cnt && !taken; ++p) {
      ibv_port_attr attr{};
      if (ibv_query_port(ctx, static_cast<uint8_t>(p), &attr) != 0) continue;
      if (attr.state != IBV_PORT_ACTIVE || !filter.allows(name, {p})) continue;
      found.push_back({name, ctx, p, attr});
      taken = true;
    }
    if (!taken) ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  if (found.empty()) {
    whyNot_ = filter.empty() ? "no active RDMA port"
                             : "no active RDMA port passes WEFT_IB_HCA=" + filter.spec();
    return weftSuccess;
  }
  std::vector<std::string> names;
  for (const Candidate& c : found) names.push_back(c.name);
  const int pick = choose(names, localIndex, localRanks);
  for (int i = 0; i < static_cast<int>(found.size()); ++i)
    if (i != pick) ibv_close_device(found[i].ctx);
  const Candidate& c = found[pick];
  ctx_ = c.ctx;
  name_ = c.name;
  port_ = c.port;
  linkLayer_ = c.attr.link_layer;
  lid_ = c.attr.lid;
  mtu_ = c.attr.active_mtu;
  if (rdmacm) WEFT_CHECK(useRdmacmContext());
  WEFT_CHECK(pickGid());
  pd_ = ibv_alloc_pd(ctx_);
  if (pd_ == nullptr)
    return setError(weftSystemError, "%s: ibv_alloc_pd failed: %s", name_.c_str(), strerror(errno));
  return weftSuccess;
}

// Swaps our context of the chosen device for librdmacm's (see ib_device.h).
// Without the rdma_ucm module (/dev/infiniband/rdma_cm) librdmacm has no
// devices: that is an error, not a reason to fall back, since the user asked
// for rdma_cm.
weftResult_t IbDevice::useRdmacmContext() {
  int n = 0;
  errno = 0;
  cmList_ = rdma_get_devices(&n);
  for (int i = 0; cmList_ != nullptr && i < n; ++i) {
    if (name_ != ibv_get_device_name(cmList_[i]->device)) continue;
    ibv_close_device(ctx_);
    ctx_ = cmList_[i];
    return weftSuccess;
  }
  const std::string why = cmList_ == nullptr ? strerror(errno) : "not among its devices";
  if (cmList_ != nullptr) rdma_free_devices(cmList_);
  cmList_ = nullptr;  // ctx_ is still ours to close
  return setError(weftSystemError,
                  "WEFT_IB_RDMACM=1: librdmacm does not list %s (%s; is the rdma_ucm module "
                  "loaded and /dev/infiniband/rdma_cm there?); unset WEFT_IB_RDMACM to connect "
                  "without rdma_cm",
                  name_.c_str(), why.c_str());
}

// With one device there is nothing to choose, but its CPUs are still where the
// progress thread belongs. Only a rank with a GPU needs the topology (path
// classes); the others go by the kernel's CPU list of each device. A topology
// that cannot be loaded is not an error: the rules fall back (rank_nic.h).
int IbDevice::choose(const std::vector<std::string>& names, int localIndex, int localRanks) {
  topo::RankNicRequest req;
  req.candidates = names;
  req.gpu = configString("WEFT_RANK_GPU");
  req.localIndex = localIndex;
  req.localRanks = localRanks;
  req.allowedCpus = topo::currentCpuAffinity();
  for (const std::string& name : names)
    req.candidateCpus.push_back(topo::verbsDeviceLocalCpus(name));
  std::string why = "not needed without WEFT_RANK_GPU";
  const topo::Topology* t = req.gpu.empty() ? nullptr : topo::processTopology(&why);
  const topo::RankNicChoice c = topo::chooseRankNic(t, why, req);
  choiceReason_ = c.reason;
  nearCpus_ = c.nearCpus;
  return c.index;
}

// RoCE needs a GID: the configured index, else the best of the table (RoCE v2
// over v1, IPv4-mapped over other global addresses, never link-local fe80::).
weftResult_t IbDevice::pickGid() {
  const int64_t forced = configInt("WEFT_IB_GID_INDEX");
  if (forced >= 0) {
    gidIndex_ = static_cast<int>(forced);
    if (ibv_query_gid(ctx_, static_cast<uint8_t>(port_), gidIndex_, &gid_) != 0)
      return setError(weftInvalidArgument, "WEFT_IB_GID_INDEX=%d: %s port %d has no such GID",
                      gidIndex_, name_.c_str(), port_);
    return weftSuccess;
  }
  if (!roce()) {  // InfiniBand: LID routing; GID 0 is still valid for a GRH
    gidIndex_ = 0;
    ibv_query_gid(ctx_, static_cast<uint8_t>(port_), 0, &gid_);
    return weftSuccess;
  }
  ibv_port_attr attr{};
  ibv_query_port(ctx_, static_cast<uint8_t>(port_), &attr);
  int bestScore = -1;
  for (int i = 0; i < attr.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(ctx_, static_cast<uint32_t>(port_), static_cast<uint32_t>(i), &entry, 0) !=
        0)
      continue;
    const uint8_t* raw = entry.gid.raw;
    static const uint8_t zero[16] = {};
    if (std::memcmp(raw, zero, 16) == 0) continue;
    const bool linkLocal = raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80;
    if (linkLocal) continue;
    const bool v4mapped = std::memcmp(raw, zero, 10) == 0 && raw[10] == 0xff && raw[11] == 0xff;
    const int score = (entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? 2 : 0) + (v4mapped ? 1 : 0);
    if (score > bestScore) {
      bestScore = score;
      gidIndex_ = i;
      std::memcpy(gid_.raw, raw, 16);
    }
  }
  if (gidIndex_ < 0)
    return setError(weftSystemError,
                    "%s port %d (RoCE) has no usable GID (only link-local or empty entries); "
                    "give the netdev an address or set WEFT_IB_GID_INDEX",
                    name_.c_str(), port_);
  return weftSuccess;
}

std::string IbDevice::describe() const {
  char addr[INET6_ADDRSTRLEN] = "";
  inet_ntop(AF_INET6, gid_.raw, addr, sizeof(addr));
  char text[256];
  std::snprintf(text, sizeof(text), "%s:%d %s GID[%d] %s LID %u MTU %d", name_.c_str(), port_,
                roce() ? "RoCE" : "InfiniBand", gidIndex_, addr, lid_, 128 << mtu_);
  return text;
}

}  // namespace weft
