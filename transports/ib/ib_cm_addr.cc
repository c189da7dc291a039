// See ib_cm_addr.h.
#include "transports/ib/ib_cm_addr.h"

#include <dirent.h>
#include <ifaddrs.h>
#include <net/if_arp.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "base/read_line.h"
#include "transports/ib/ib_cm_wire.h"

namespace weft {
namespace {

// The IPoIB interface of the port whose GID is `gid`, with an address:
// IPv4 first, else a global IPv6 one. False when there is none.
bool ipoibAddress(const uint8_t gid[16], sockaddr_storage* out, std::string* ifname) {
  DIR* dir = opendir("/sys/class/net");
  if (dir == nullptr) return false;
  std::string found;
  while (dirent* d = readdir(dir)) {
    const std::string base = std::string("/sys/class/net/") + d->d_name;
    if (d->d_name[0] == '.' || readFirstLine(base + "/type") != std::to_string(ARPHRD_INFINIBAND))
      continue;
    if (!ipoibAddressHasGid(readFirstLine(base + "/address"), gid)) continue;
    found = d->d_name;
    break;
  }
  closedir(dir);
  if (found.empty()) return false;
  *ifname = found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool ok = false;
  for (int family : {AF_INET, AF_INET6})
    for (ifaddrs* a = list; a != nullptr && !ok; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != family || found != a->ifa_name)
        continue;
      uint8_t raw[16];
      std::string why;
      ok = sockaddrToGidForm(a->ifa_addr, raw) && gidToSockaddr(raw, 0, out, &why);  // no fe80::
    }
  freeifaddrs(list);
  return ok;
}

}  // namespace

weftResult_t cmLocalAddress(const IbDevice& dev, sockaddr_storage* out) {
  std::string why, ifname;
  if (dev.roce()) {
    if (gidToSockaddr(dev.gid().raw, 0, out, &why)) return weftSuccess;
    return setError(weftInvalidUsage,
                    "WEFT_IB_RDMACM=1: %s port %d has no IP address for rdma_cm (GID[%d]: %s); "
                    "give its netdev an IP address (or pick such a GID with WEFT_IB_GID_INDEX), "
                    "or unset WEFT_IB_RDMACM",
                    dev.name().c_str(), dev.port(), dev.gidIndex(), why.c_str());
  }
  if (ipoibAddress(dev.gid().raw, out, &ifname)) return weftSuccess;
  return setError(weftInvalidUsage,
                  "WEFT_IB_RDMACM=1: %s port %d (InfiniBand) has no IP address for rdma_cm (%s); "
                  "configure IPoIB with an address, or unset WEFT_IB_RDMACM",
                  dev.name().c_str(), dev.port(),
                  ifname.empty() ? "no IPoIB interface carries its GID"
                                 : ("IPoIB interface " + ifname + " has none").c_str());
}

}  // namespace weft
