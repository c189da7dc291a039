// See ib_device.h.
#include "transports/ib/ib_device.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "core/log.h"
#include "topo/hca_filter.h"

namespace weft {

IbDevice::~IbDevice() {
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
  if (ctx_ != nullptr) ibv_close_device(ctx_);
}

weftResult_t IbDevice::open() {
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n == 0) {
    whyNot_ =
        list == nullptr && errno == ENOSYS ? "the kernel has no RDMA support" : "no RDMA device";
    if (list != nullptr) ibv_free_device_list(list);
    return weftSuccess;
  }
  topo::HcaFilter filter(configString("WEFT_IB_HCA"));
  for (int i = 0; i < n && ctx_ == nullptr; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    ibv_context* ctx = ibv_open_device(list[i]);
    if (ctx == nullptr) continue;
    ibv_device_attr dev{};
    if (ibv_query_device(ctx, &dev) != 0) {
      ibv_close_device(ctx);
      continue;
    }
    for (int p = 1; p <= dev.phys_port_cnt; ++p) {
      ibv_port_attr attr{};
      if (ibv_query_port(ctx, static_cast<uint8_t>(p), &attr) != 0) continue;
      if (attr.state != IBV_PORT_ACTIVE || !filter.allows(name, {p})) continue;
      ctx_ = ctx;
      name_ = name;
      port_ = p;
      linkLayer_ = attr.link_layer;
      lid_ = attr.lid;
      mtu_ = attr.active_mtu;
      break;
    }
    if (ctx_ == nullptr) ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  if (ctx_ == nullptr) {
    whyNot_ = filter.empty() ? "no active RDMA port"
                             : "no active RDMA port passes WEFT_IB_HCA=" + filter.spec();
    return weftSuccess;
  }
  WEFT_CHECK(pickGid());
  pd_ = ibv_alloc_pd(ctx_);
  if (pd_ == nullptr)
    return setError(weftSystemError, "%s: ibv_alloc_pd failed: %s", name_.c_str(), strerror(errno));
  return weftSuccess;
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
