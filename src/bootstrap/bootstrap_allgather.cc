// The bootstrap's allgather and barrier, in ceil(log2 n) steps rather than
// the ring's n - 1: at init, n ranks run several of them, and on a loaded
// node each step costs a scheduling round, so a ring made init grow with n.
//
// The steps (Bruck's allgather, turned around): rank r keeps the blocks it
// holds in a scratch buffer, its own first, then r-1, r-2, ... At step k, with
// d = 2^k, it sends its first min(d, n - d) blocks to r + d and appends the
// same number from r - d, which are blocks r-d, r-d-1, ...: after the steps
// scratch[i] is block r - i. Step 0 (d = 1) runs on the bootstrap's ring;
// step k >= 1 on a connection of its own each way, made at the first
// allgather and kept (2 log2 n connections per rank).
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "bootstrap/bootstrap.h"

namespace weft {

weftResult_t Bootstrap::openSteps() {
  if (!stepOut_.empty()) return weftSuccess;
  int steps = 0;
  while ((int64_t{1} << steps) < nranks_) ++steps;
  stepOut_.assign(steps, -1);
  stepIn_.assign(steps, -1);
  // All connects first: each completes against the peer's listener, so no
  // rank waits on another's order.
  for (int k = 1; k < steps; ++k)
    WEFT_CHECK(connectPeer((rank_ + (1 << k)) % nranks_, kTagAllgatherStep + k, &stepOut_[k]));
  for (int k = 1; k < steps; ++k)
    WEFT_CHECK(acceptPeer(((rank_ - (1 << k)) % nranks_ + nranks_) % nranks_, kTagAllgatherStep + k,
                          &stepIn_[k]));
  return weftSuccess;  // [0] stays -1: step 0 runs on the ring's
}

weftResult_t Bootstrap::exchange(int outFd, const char* out, int inFd, char* in, size_t bytes,
                                 int step, int to, int from, const Deadline& deadline) {
  size_t sent = 0, got = 0;
  while (sent < bytes || got < bytes) {
    if (abort_ && abort_->load())
      return setError(weftInvalidUsage, "communicator aborted during bootstrap");
    if (deadline.expired())
      return setError(weftTimeout,
                      "rank %d: bootstrap allgather step %d timed out after %.0f s (WEFT_TIMEOUT) "
                      "waiting for %s",
                      rank_, step, deadline.seconds(),
                      got < bytes ? peerName(from).c_str() : peerName(to).c_str());
    pollfd p[2] = {{outFd, static_cast<short>(sent < bytes ? POLLOUT : 0), 0},
                   {inFd, static_cast<short>(got < bytes ? POLLIN : 0), 0}};
    if (poll(p, 2, deadline.remainingMs(100)) < 0 && errno != EINTR)
      return setError(weftSystemError, "poll failed: %s", strerror(errno));
    if (sent < bytes && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = send(outFd, out + sent, bytes - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0)
        sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        return setError(weftRemoteError, "rank %d: bootstrap link to %s broke: %s", rank_,
                        peerName(to).c_str(), strerror(errno));
    }
    if (got < bytes && (p[1].revents & (POLLIN | POLLERR | POLLHUP))) {
      ssize_t n = recv(inFd, in + got, bytes - got, MSG_DONTWAIT);
      if (n > 0)
        got += static_cast<size_t>(n);
      else if (n == 0)
        return setError(weftRemoteError, "rank %d: %s closed the bootstrap connection", rank_,
                        peerName(from).c_str());
      else if (errno != EAGAIN && errno != EINTR)
        return setError(weftRemoteError, "rank %d: bootstrap link to %s broke: %s", rank_,
                        peerName(from).c_str(), strerror(errno));
    }
  }
  return weftSuccess;
}

weftResult_t Bootstrap::allgather(void* data, size_t bytes) {
  if (nranks_ == 1 || bytes == 0) return weftSuccess;
  WEFT_CHECK(openSteps());
  const int n = nranks_;
  char* base = static_cast<char*>(data);
  std::vector<char> held(static_cast<size_t>(n) * bytes);
  std::memcpy(held.data(), base + static_cast<size_t>(rank_) * bytes, bytes);
  Deadline deadline = Deadline::fromConfig();
  for (int k = 0, have = 1; have < n; ++k) {
    const int d = 1 << k, count = std::min(d, n - d);
    const int to = (rank_ + d) % n, from = ((rank_ - d) % n + n) % n;
    WEFT_CHECK(exchange(k == 0 ? ringNext_ : stepOut_[k], held.data(),
                        k == 0 ? ringPrev_ : stepIn_[k],
                        held.data() + static_cast<size_t>(have) * bytes,
                        static_cast<size_t>(count) * bytes, k, to, from, deadline));
    have += count;
  }
  for (int i = 1; i < n; ++i)
    std::memcpy(base + static_cast<size_t>(((rank_ - i) % n + n) % n) * bytes,
                held.data() + static_cast<size_t>(i) * bytes, bytes);
  return weftSuccess;
}

weftResult_t Bootstrap::barrier() {
  std::vector<char> scratch(nranks_);
  return allgather(scratch.data(), 1);
}

}  // namespace weft
