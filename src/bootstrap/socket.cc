// Bounded socket operations (see socket.h).
#include "bootstrap/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"

namespace weft {
namespace {

// WEFT_SOCKET_FAMILY as an address family (AF_UNSPEC: either), any case as
// its row takes it; a word outside it is refused at communicator init.
int familyWanted() {
  const std::string fam = configString("WEFT_SOCKET_FAMILY");
  if (strcasecmp(fam.c_str(), "AF_INET") == 0) return AF_INET;
  if (strcasecmp(fam.c_str(), "AF_INET6") == 0) return AF_INET6;
  return AF_UNSPEC;
}

}  // namespace

int SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::setPort(int port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
}

std::string SockAddr::str() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  return "<no address>";
}

bool parseHostPort(const std::string& text, SockAddr* out, std::string* why) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *why = "'" + text + "' is not [ipv6]:port";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      *why = "'" + text + "' has no ':port'";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    *why = "'" + port + "' is not a port number";
    return false;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  const int fam = familyWanted();
  hints.ai_family = fam;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    *why = "cannot resolve host '" + host + "': " + gai_strerror(rc);
    return false;
  }
  std::memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
  out->len = res->ai_addrlen;
  out->setPort(static_cast<int>(p));
  freeaddrinfo(res);
  return true;
}

bool interfaceMatches(const std::string& filter, const std::string& name) {
  if (filter.empty()) return true;
  std::string spec = filter;
  bool exclude = false, exact = false;
  if (!spec.empty() && spec[0] == '^') exclude = true, spec.erase(0, 1);
  if (!spec.empty() && spec[0] == '=') exact = true, spec.erase(0, 1);
  bool hit = false;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string tok =
        spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!tok.empty() && (exact ? name == tok : name.compare(0, tok.size(), tok) == 0)) hit = true;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return exclude ? !hit : hit;
}

weftResult_t pickInterface(SockAddr* out, std::string* ifname) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return setError(weftSystemError, "getifaddrs failed: %s", strerror(errno));
  }
  std::string filter = configString("WEFT_SOCKET_IFNAME");
  const int fam = familyWanted();
  // Pass 0: the filter (or non-loopback, non-docker when no filter). Pass 1: loopback.
  bool found = false;
  for (int pass = 0; pass < 2 && !found; ++pass) {
    for (ifaddrs* it = list; it && !found; it = it->ifa_next) {
      if (!it->ifa_addr || !(it->ifa_flags & IFF_UP)) continue;
      int f = it->ifa_addr->sa_family;
      if (f != AF_INET && f != AF_INET6) continue;
      if (fam != AF_UNSPEC && f != fam) continue;
      if (f == AF_INET6) {
        auto* a6 = reinterpret_cast<const sockaddr_in6*>(it->ifa_addr);
        if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;  // needs a scope id; skip
      }
      std::string name = it->ifa_name;
      bool loop = (it->ifa_flags & IFF_LOOPBACK) != 0;
      bool ok;
      if (!filter.empty())
        ok = pass == 0 && interfaceMatches(filter, name);
      else if (pass == 0)
        ok = !loop && name.compare(0, 6, "docker") != 0 && name.compare(0, 4, "virbr") != 0;
      else
        ok = loop;
      // Prefer IPv4 on an interface that has both: skip v6 in pass 0 if a v4 exists later.
      if (!ok) continue;
      std::memset(&out->ss, 0, sizeof(out->ss));
      size_t len = f == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      std::memcpy(&out->ss, it->ifa_addr, len);
      out->len = len;
      *ifname = name;
      found = true;
    }
    if (!filter.empty()) break;
  }
  freeifaddrs(list);
  if (!found) {
    return setError(weftSystemError, "no usable network interface%s%s",
                    filter.empty() ? "" : " matches WEFT_SOCKET_IFNAME=", filter.c_str());
  }
  return weftSuccess;
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void setNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void closeFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

bool peerSocketClosed(int fd) {
  char byte;
  const ssize_t got = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

weftResult_t listenOn(const SockAddr& bindAddr, int* fd, SockAddr* bound) {
  int s = socket(bindAddr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return setError(weftSystemError, "socket() failed: %s", strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s, reinterpret_cast<const sockaddr*>(&bindAddr.ss), bindAddr.len) != 0) {
    int e = errno;
    close(s);
    return setError(weftSystemError, "cannot bind %s: %s", bindAddr.str().c_str(), strerror(e));
  }
  // A deep backlog: every peer may connect before we get to accept.
  if (listen(s, 4096) != 0) {
    int e = errno;
    close(s);
    return setError(weftSystemError, "listen failed: %s", strerror(e));
  }
  setNonBlocking(s);
  bound->len = sizeof(bound->ss);
  getsockname(s, reinterpret_cast<sockaddr*>(&bound->ss), &bound->len);
  *fd = s;
  return weftSuccess;
}

namespace {

bool aborted(const std::atomic<bool>* f) { return f && f->load(std::memory_order_relaxed); }

// Waits until fd is ready for `events`; false when the deadline passed or abort.
weftResult_t pollFor(int fd, short events, const Deadline& deadline,
                     const std::atomic<bool>* abortFlag, const char* what) {
  for (;;) {
    if (aborted(abortFlag))
      return setError(weftInvalidUsage, "communicator aborted while waiting for %s", what);
    if (deadline.expired()) {
      return setError(weftTimeout, "timed out after %.0f s (WEFT_TIMEOUT) waiting for %s",
                      deadline.seconds(), what);
    }
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, deadline.remainingMs(100));
    if (rc > 0) return weftSuccess;
    if (rc < 0 && errno != EINTR)
      return setError(weftSystemError, "poll failed: %s", strerror(errno));
  }
}

}  // namespace

weftResult_t connectTo(const SockAddr& addr, const Deadline& deadline,
                       const std::atomic<bool>* abortFlag, const char* what, int* fd,
                       bool listening) {
  int delayMs = 5;
  for (;;) {
    int s = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) return setError(weftSystemError, "socket() failed: %s", strerror(errno));
    int rc = connect(s, reinterpret_cast<const sockaddr*>(&addr.ss), addr.len);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      weftResult_t r = pollFor(s, POLLOUT, deadline, abortFlag, what);
      if (r != weftSuccess) {
        close(s);
        return r;
      }
      socklen_t len = sizeof(err);
      getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      setNoDelay(s);
      *fd = s;
      return weftSuccess;
    }
    close(s);
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
                 err == EHOSTUNREACH || err == ECONNRESET || err == EAGAIN;
    if (listening && err == ECONNREFUSED)
      return setError(weftRemoteError,
                      "%s no longer listens at %s (process exited, or its "
                      "communicator was destroyed)",
                      what, addr.str().c_str());
    if (!retry) {
      return setError(weftSystemError, "cannot connect to %s at %s: %s", what, addr.str().c_str(),
                      strerror(err));
    }
    if (aborted(abortFlag))
      return setError(weftInvalidUsage, "communicator aborted while connecting to %s", what);
    if (deadline.expired()) {
      return setError(weftTimeout,
                      "timed out after %.0f s (WEFT_TIMEOUT) connecting to %s at %s: %s",
                      deadline.seconds(), what, addr.str().c_str(), strerror(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    delayMs = std::min(delayMs * 2, 100);
  }
}

weftResult_t acceptOne(int listenFd, const Deadline& deadline, const std::atomic<bool>* abortFlag,
                       int* fd) {
  for (;;) {
    int s = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (s >= 0) {
      setNoDelay(s);
      *fd = s;
      return weftSuccess;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
      return setError(weftSystemError, "accept failed: %s", strerror(errno));
    }
    WEFT_CHECK(pollFor(listenFd, POLLIN, deadline, abortFlag, "incoming connections"));
  }
}

weftResult_t sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline,
                     const std::atomic<bool>* abortFlag, const char* what) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      WEFT_CHECK(pollFor(fd, POLLOUT, deadline, abortFlag, what));
      continue;
    }
    return setError(weftRemoteError, "connection to %s broke while sending: %s", what,
                    strerror(errno));
  }
  return weftSuccess;
}

weftResult_t recvAll(int fd, void* data, size_t bytes, const Deadline& deadline,
                     const std::atomic<bool>* abortFlag, const char* what) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return setError(weftRemoteError, "%s closed the connection", what);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      WEFT_CHECK(pollFor(fd, POLLIN, deadline, abortFlag, what));
      continue;
    }
    return setError(weftRemoteError, "connection to %s broke while receiving: %s", what,
                    strerror(errno));
  }
  return weftSuccess;
}

}  // namespace weft
