// HelloGate: where a listening socket's connections wait for their first
// message (a fixed-size Hello). It accepts and reads from all of them at once
// with poll, so a silent stranger (a port scanner, a stale job) costs nobody
// anything: it is dropped after 5 s while the real ranks pass. Used by the
// rendezvous root and by every rank's bootstrap listener.
#pragma once

#include <poll.h>

#include <chrono>
#include <utility>
#include <vector>

#include "bootstrap/wire.h"
#include "weft/weft.h"

namespace weft {

class HelloGate {
 public:
  static constexpr size_t kMaxPending = 256;  // connections still owing their Hello
  static constexpr int kHelloSeconds = 5;     // how long one may take to say it

  explicit HelloGate(int listenFd) : listenFd_(listenFd) {}
  ~HelloGate();
  HelloGate(const HelloGate&) = delete;
  HelloGate& operator=(const HelloGate&) = delete;

  // Waits up to waitMs for activity, accepts new connections and reads what
  // arrived. Connections whose Hello is complete are appended to `ready`;
  // their sockets then belong to the caller (the Hello is not yet checked).
  weftResult_t poll(int waitMs, std::vector<std::pair<int, Hello>>* ready);
  // Connections accepted that still owe their Hello.
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    int fd;
    std::chrono::steady_clock::time_point since;
    size_t got;
    Hello hello;
  };
  void drop(size_t i, const char* why);
  // Reads what arrived of p's Hello without blocking; false when the peer
  // closed or the socket failed.
  static bool readMore(Pending& p);

  int listenFd_;  // owned by the caller
  std::vector<Pending> pending_;
  std::vector<pollfd> pfds_;
};

}  // namespace weft
