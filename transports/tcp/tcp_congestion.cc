// See tcp_congestion.h.
#include "transports/tcp/tcp_congestion.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/read_line.h"

namespace weft {
namespace {

constexpr const char* kSameHostAlgorithm = "reno";

// The IPv4 address inside `a` (plain, or IPv4-mapped IPv6), in host order.
bool ipv4Of(const sockaddr_storage& a, uint32_t* out) {
  if (a.ss_family == AF_INET) {
    *out = ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr);
    return true;
  }
  if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (!IN6_IS_ADDR_V4MAPPED(&v6)) return false;
    uint32_t v = 0;
    std::memcpy(&v, v6.s6_addr + 12, sizeof(v));
    *out = ntohl(v);
    return true;
  }
  return false;
}

// The socket's current algorithm, or "" when the kernel will not say.
std::string runningOn(int fd) {
  char name[64] = {};
  socklen_t len = sizeof(name) - 1;
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "";
  return std::string(name, strnlen(name, len));
}

weftResult_t setAlgorithm(int fd, const std::string& name) {
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                 static_cast<socklen_t>(name.size())) == 0)
    return weftSuccess;
  const int e = errno;
  if (e == ENOENT || e == EINVAL)
    return setError(weftInvalidArgument,
                    "WEFT_SOCKET_CONGESTION=%s: this kernel has no such TCP congestion control "
                    "(available: %s); use auto, system or one of those",
                    name.c_str(),
                    readFirstLine("/proc/sys/net/ipv4/tcp_available_congestion_control").c_str());
  if (e == EPERM)
    return setError(weftInvalidArgument,
                    "WEFT_SOCKET_CONGESTION=%s: this process may not set it (allowed without "
                    "CAP_NET_ADMIN: %s); use auto, system or one of those",
                    name.c_str(),
                    readFirstLine("/proc/sys/net/ipv4/tcp_allowed_congestion_control").c_str());
  return setError(weftSystemError, "WEFT_SOCKET_CONGESTION=%s: setsockopt(TCP_CONGESTION): %s",
                  name.c_str(), strerror(e));
}

}  // namespace

std::vector<const char*> autoCongestion(bool sameHost, const std::string& running) {
  if (sameHost) return {kSameHostAlgorithm};
  // CUBIC needs CAP_NET_ADMIN where the system allows only its default and
  // Reno; Reno behaves alike at a data centre's round trips.
  if (running == "bbr") return {"cubic", "reno"};
  return {};
}

bool sameHostAddresses(const sockaddr_storage& local, const sockaddr_storage& peer) {
  uint32_t l4 = 0, p4 = 0;
  const bool localV4 = ipv4Of(local, &l4), peerV4 = ipv4Of(peer, &p4);
  if (peerV4) return (p4 >> 24) == 127 || (localV4 && l4 == p4);
  if (peer.ss_family != AF_INET6) return false;
  const in6_addr& p6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
  if (IN6_IS_ADDR_LOOPBACK(&p6)) return true;
  if (local.ss_family != AF_INET6 || localV4) return false;
  const in6_addr& l6 = reinterpret_cast<const sockaddr_in6&>(local).sin6_addr;
  return std::memcmp(&l6, &p6, sizeof(in6_addr)) == 0;
}

weftResult_t checkCongestionSetting(const std::string& setting) {
  if (setting == "auto" || setting == "system") return weftSuccess;
  if (setting.empty() || setting.size() >= 16)  // the kernel's names fit TCP_CA_NAME_MAX (16)
    return setError(weftInvalidArgument,
                    "WEFT_SOCKET_CONGESTION=%s: expected auto, system or the name of a TCP "
                    "congestion control (e.g. reno, cubic, bbr)",
                    setting.c_str());
  const int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0)
    return setError(weftSystemError, "socket() for WEFT_SOCKET_CONGESTION's check failed: %s",
                    strerror(errno));
  const weftResult_t r = setAlgorithm(probe, setting);
  close(probe);
  return r;
}

weftResult_t applyCongestion(int fd, const std::string& setting, CongestionOutcome* out) {
  sockaddr_storage local{}, peer{};
  socklen_t llen = sizeof(local), plen = sizeof(peer);
  out->sameHost = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) == 0 &&
                  getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) == 0 &&
                  sameHostAddresses(local, peer);
  if (setting == "auto") {
    // Best effort: what the kernel refuses leaves the next choice, or its default.
    for (const char* name : autoCongestion(out->sameHost, runningOn(fd)))
      if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, static_cast<socklen_t>(strlen(name))) ==
          0)
        break;
  } else if (setting != "system") {
    WEFT_CHECK(setAlgorithm(fd, setting));
  }
  out->running = runningOn(fd);
  return weftSuccess;
}

}  // namespace weft
