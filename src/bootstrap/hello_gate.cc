// Reading many Hellos at once (see hello_gate.h).
#include "bootstrap/hello_gate.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "bootstrap/socket.h"

namespace weft {

HelloGate::~HelloGate() {
  for (Pending& p : pending_) close(p.fd);
}

void HelloGate::drop(size_t i, const char* why) {
  WEFT_WARN(BOOTSTRAP, "dropped a connection that %s", why);
  close(pending_[i].fd);
  pending_.erase(pending_.begin() + static_cast<long>(i));
}

bool HelloGate::readMore(Pending& p) {
  const ssize_t n =
      recv(p.fd, reinterpret_cast<char*>(&p.hello) + p.got, sizeof(Hello) - p.got, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return false;
  if (n > 0) p.got += static_cast<size_t>(n);
  return true;
}

weftResult_t HelloGate::poll(int waitMs, std::vector<std::pair<int, Hello>>* ready) {
  pfds_.assign(1, pollfd{listenFd_, POLLIN, 0});
  for (const Pending& p : pending_) pfds_.push_back(pollfd{p.fd, POLLIN, 0});
  if (::poll(pfds_.data(), pfds_.size(), waitMs) < 0 && errno != EINTR)
    return setError(weftSystemError, "poll failed: %s", strerror(errno));
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = pending_.size(); i-- > 0;) {
    Pending& p = pending_[i];
    if (pfds_[i + 1].revents != 0) {
      if (!readMore(p)) {
        drop(i, "closed before its Hello");
        continue;
      }
      if (p.got == sizeof(Hello)) {
        ready->emplace_back(p.fd, p.hello);
        pending_.erase(pending_.begin() + static_cast<long>(i));
        continue;
      }
    }
    if (now - p.since > std::chrono::seconds(kHelloSeconds)) drop(i, "sent no Hello in 5 s");
  }
  for (;;) {
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    // Out of descriptors, the connection stays queued and the listener
    // readable: say so rather than spin on it until the deadline.
    if (fd < 0 && (errno == EMFILE || errno == ENFILE))
      return setError(weftSystemError,
                      "cannot accept another connection: %s (see RLIMIT_NOFILE, `ulimit -n`)",
                      strerror(errno));
    if (fd < 0) break;
    setNoDelay(fd);
    // A rank sends its Hello right after connecting, so it is usually here
    // already: take it now. Only a connection still owing it waits in the
    // gate, where a full gate drops the one that waited longest. (Accepting a
    // whole backlog before reading would drop real ranks whose Hellos sit
    // unread: a large job's peers all connect to each rank at once.)
    Pending p{fd, std::chrono::steady_clock::now(), 0, Hello{}};
    if (!readMore(p)) {
      close(fd);
      continue;
    }
    if (p.got == sizeof(Hello)) {
      ready->emplace_back(p.fd, p.hello);
      continue;
    }
    if (pending_.size() >= kMaxPending) drop(0, "waited longest while the gate was full");
    pending_.push_back(p);
  }
  return weftSuccess;
}

}  // namespace weft
