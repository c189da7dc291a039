// Owner of a loopback connection's peer socket (see peer_user.h).
#include "bootstrap/peer_user.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace weft {
namespace {

// An address as /proc/net/tcp{,6} prints it: each 32-bit word of the address
// as the host reads it, in hex, then the port in host order.
std::string procAddr(const SockAddr& a) {
  char buf[64];
  if (a.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a.ss);
    uint32_t word;
    std::memcpy(&word, &in->sin_addr, 4);
    snprintf(buf, sizeof(buf), "%08X:%04X", word, ntohs(in->sin_port));
    return buf;
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.ss);
  uint32_t w[4];
  std::memcpy(w, &in6->sin6_addr, 16);
  snprintf(buf, sizeof(buf), "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
           ntohs(in6->sin6_port));
  return buf;
}

}  // namespace

bool isLoopback(const SockAddr& a) {
  if (a.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a.ss);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (a.family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.ss);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

bool peerIsSameUser(int fd) {
  SockAddr mine, peer;
  mine.len = sizeof(mine.ss);
  peer.len = sizeof(peer.ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&mine.ss), &mine.len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer.ss), &peer.len) != 0 || !isLoopback(peer))
    return false;
  // The peer's socket is the line whose local end is the peer and whose
  // remote end is this socket.
  const std::string local = procAddr(peer), remote = procAddr(mine);
  std::ifstream table(peer.family() == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, loc, rem, state, queues, timer, retransmits;
    unsigned long uid = 0;
    if (!(fields >> slot >> loc >> rem >> state >> queues >> timer >> retransmits >> uid)) continue;
    if (loc == local && rem == remote) return uid == static_cast<unsigned long>(geteuid());
  }
  return false;
}

}  // namespace weft
