// Socket helpers shared by the bootstrap and the TCP transport: addresses,
// interface choice (WEFT_SOCKET_IFNAME), and bounded connect/accept/send/recv.
// Every call that may wait takes a Deadline and an abort flag and fails with
// weftTimeout / weftRemoteError and a sentence instead of blocking forever.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <string>

#include "base/wait.h"
#include "weft/weft.h"

namespace weft {

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;

  int family() const { return ss.ss_family; }
  int port() const;
  void setPort(int port);
  std::string str() const;  // "1.2.3.4:5" or "[::1]:5"
};

// "host:port" or "[v6addr]:port"; host may be a name (resolved with getaddrinfo).
bool parseHostPort(const std::string& text, SockAddr* out, std::string* why);

// The address this process should listen on and advertise: the first usable
// interface that matches WEFT_SOCKET_IFNAME (NCCL syntax: "eth,ib" prefixes,
// "=eth0" exact, "^docker" excludes), else the first non-loopback interface,
// else loopback. `ifname` receives the interface's name.
weftResult_t pickInterface(SockAddr* out, std::string* ifname);

// True when `name` passes an NCCL-style interface filter (exposed for tests).
bool interfaceMatches(const std::string& filter, const std::string& name);

// A non-blocking listening socket on `bindAddr` (port 0 = any); `bound` gets
// the actual address.
weftResult_t listenOn(const SockAddr& bindAddr, int* fd, SockAddr* bound);

// Connects, retrying refused connections until the deadline (the peer may not
// be listening yet), unless `listening`: the peer's listener is known to have
// been up, so a refusal means it closed. The returned socket is non-blocking
// with TCP_NODELAY.
weftResult_t connectTo(const SockAddr& addr, const Deadline& deadline,
                       const std::atomic<bool>* abortFlag, const char* what, int* fd,
                       bool listening = false);

// Accepts one connection (non-blocking, TCP_NODELAY) within the deadline.
weftResult_t acceptOne(int listenFd, const Deadline& deadline, const std::atomic<bool>* abortFlag,
                       int* fd);

// Sends/receives exactly `bytes`, waiting in poll() in between. A closed peer is
// weftRemoteError and a missing one weftTimeout; `what` names the peer.
weftResult_t sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline,
                     const std::atomic<bool>* abortFlag, const char* what);
weftResult_t recvAll(int fd, void* data, size_t bytes, const Deadline& deadline,
                     const std::atomic<bool>* abortFlag, const char* what);

void setNoDelay(int fd);
void setNonBlocking(int fd);
void closeFd(int* fd);

// Whether the peer of connected socket `fd` is gone: a peek, without waiting,
// sees its end of file or an error. Bytes waiting, or none yet, mean a live
// peer. The one death check behind every wait on a peer that sends no data
// on this socket (shared memory, verbs, the GPU ring, the boards).
bool peerSocketClosed(int fd);

}  // namespace weft
