// Sending by reference over a TCP socket (see splice_sender.h).
#include "transports/tcp/splice_sender.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace weft {
namespace {

// A pipe this large holds a whole default chunk (512 KiB) with room for a
// misaligned first and last page; 1 MiB is also the default pipe-max-size,
// which an unprivileged process may ask for.
constexpr int kPipeBytes = 1 << 20;

// splice() into a socket whose peer is gone raises SIGPIPE (it has no
// MSG_NOSIGNAL), which would kill a process that did not ignore it. SIGPIPE
// from a system call goes to the calling thread, so blocking it here around
// the call and taking back what this call raised keeps it away from the
// application, whatever its own signal setup is.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipeSet_);
    sigaddset(&pipeSet_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipeSet_, &old_);
  }
  ~SigpipeGuard() {
    sigset_t pending;
    if (mayHaveRaised_ && !wasPending_ && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{0, 0};
      while (sigtimedwait(&pipeSet_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  // The call moved less than asked: it may have met a dead peer, which
  // raises SIGPIPE even when some bytes went before the error.
  void mayHaveRaised() { mayHaveRaised_ = true; }

 private:
  sigset_t pipeSet_, old_;
  bool wasPending_ = false, mayHaveRaised_ = false;
};

}  // namespace

SpliceSender::SpliceSender(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
    WEFT_INFO(NET, "no pipe for sending to %s by reference (%s): sends copy", peer_.c_str(),
              strerror(errno));
    return;
  }
  pipeRead_ = p[0];
  pipeWrite_ = p[1];
  fcntl(pipeWrite_, F_SETPIPE_SZ, kPipeBytes);  // smaller if refused: still correct
  int cap = fcntl(pipeWrite_, F_GETPIPE_SZ);
  pipeCapacity_ = cap > 0 ? static_cast<size_t>(cap) : 0;
  if (pipeCapacity_ < 16384) return;  // too few slots to be worth two system calls
  int flags = fcntl(fd_, F_GETFL);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  usable_ = true;
}

SpliceSender::~SpliceSender() {
  if (pipeRead_ >= 0) close(pipeRead_);
  if (pipeWrite_ >= 0) close(pipeWrite_);
}

weftResult_t SpliceSender::trySend(const char* data, size_t bytes, size_t* moved, bool* fallback) {
  *moved = 0;
  *fallback = false;
  if (pendingBytes_ == 0) {
    if (!usable_ || bytes == 0) {
      *fallback = true;
      return weftSuccess;
    }
    // Leave a page of the pipe's slots for a misaligned start: vmsplice takes
    // one slot per page touched, so a full-capacity request could stop short.
    iovec iov{const_cast<char*>(data), std::min(bytes, pipeCapacity_ - 4096)};
    ssize_t v = vmsplice(pipeWrite_, &iov, 1, SPLICE_F_NONBLOCK);
    if (v <= 0) {
      // Memory the kernel cannot reference (a device mapping, say): copy from
      // now on rather than ask again for every chunk.
      if (v < 0 && errno != EAGAIN) {
        WEFT_INFO(NET, "sending to %s by reference failed (%s): sends copy from now on",
                  peer_.c_str(), strerror(errno));
        usable_ = false;
      }
      *fallback = true;
      return weftSuccess;
    }
    pendingData_ = data;
    pendingBytes_ = static_cast<size_t>(v);
  }
  if (data != pendingData_)
    return setError(weftInternalError,
                    "sending to %s: a send by reference resumed at another address", peer_.c_str());
  SigpipeGuard guard;
  ssize_t s = splice(pipeRead_, nullptr, fd_, nullptr, pendingBytes_, SPLICE_F_NONBLOCK);
  if (s != static_cast<ssize_t>(pendingBytes_)) guard.mayHaveRaised();
  if (s > 0) {
    pendingData_ += s;
    pendingBytes_ -= static_cast<size_t>(s);
    *moved = static_cast<size_t>(s);
    return weftSuccess;
  }
  if (s == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return weftSuccess;
  int e = errno;
  return setError(weftRemoteError, "connection to %s broke while sending: %s", peer_.c_str(),
                  strerror(e));
}

}  // namespace weft
