// The rendezvous root. Serves one job: accepts a Hello from each of nranks
// ranks (dropping connections that lack the job's secret), then sends every
// rank the table of all ranks' listener addresses. If not every rank arrives
// within the deadline it tells the ranks that did which ones are missing.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

namespace weft {

class RootServer {
 public:
  // Listens on `bindAddr` (port 0 = any) and serves from a detached thread,
  // which owns itself and exits once the job rendezvoused or timed out.
  // With `sameUserOnly`, it admits only this user's loopback connections.
  static weftResult_t start(const SockAddr& bindAddr, const uint8_t* secret, bool sameUserOnly,
                            SockAddr* bound);
};

}  // namespace weft
