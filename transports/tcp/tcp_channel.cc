// See tcp_channel.h.
#include "transports/tcp/tcp_channel.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace weft {

weftResult_t TcpChannel::trySend(const void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  if (splice_ && splice_->pending() > 0)  // those bytes are the stream's next ones
    return setError(weftInternalError, "sending to %s: a copy send overtook a send by reference",
                    peer_.c_str());
  ssize_t n = send(fd_, data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) {
    *moved = static_cast<size_t>(n);
    return weftSuccess;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return weftSuccess;
  return setError(weftRemoteError, "connection to %s broke while sending: %s", peer_.c_str(),
                  strerror(errno));
}

TcpChannel::~TcpChannel() = default;

weftResult_t TcpChannel::trySendStable(const void* data, size_t bytes, size_t* moved) {
  if (!splice_ && (spliceMin_ == 0 || bytes < spliceMin_)) return trySend(data, bytes, moved);
  if (!splice_) splice_ = std::make_unique<SpliceSender>(fd_, peer_);
  // The tail of an item already in the pipe must follow it, whatever its size.
  if (splice_->pending() == 0 && bytes < spliceMin_) return trySend(data, bytes, moved);
  bool fallback = false;
  WEFT_CHECK(splice_->trySend(static_cast<const char*>(data), bytes, moved, &fallback));
  return fallback ? trySend(data, bytes, moved) : weftSuccess;
}

weftResult_t TcpChannel::tryRecv(void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  if (aheadPos_ < aheadEnd_) {  // bytes read ahead earlier come first
    size_t take = std::min(bytes, aheadEnd_ - aheadPos_);
    std::memcpy(data, ahead_.get() + aheadPos_, take);
    aheadPos_ += take;
    *moved = take;
    return weftSuccess;
  }
  const bool small = bytes < kSmallRead;
  // Allocated at the channel's first receive of any size, not its first small
  // one: a lane first used for bulk data would otherwise allocate in the
  // middle of some later call (no allocation after a call's first run).
  if (!ahead_) ahead_.reset(new char[kReadAhead]);
  ssize_t n = small ? recv(fd_, ahead_.get(), kReadAhead, MSG_DONTWAIT)
                    : recv(fd_, data, bytes, MSG_DONTWAIT);
  if (n > 0 && small) {
    aheadPos_ = 0;
    aheadEnd_ = static_cast<size_t>(n);
    return tryRecv(data, bytes, moved);
  }
  if (n > 0) {
    *moved = static_cast<size_t>(n);
    return weftSuccess;
  }
  if (n == 0)
    return setError(weftRemoteError,
                    "%s closed its connection (process exited, or its communicator failed)",
                    peer_.c_str());
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return weftSuccess;
  return setError(weftRemoteError, "connection to %s broke while receiving: %s", peer_.c_str(),
                  strerror(errno));
}

weftResult_t TcpChannel::tryPeek(void* data, size_t bytes, size_t* got) {
  *got = 0;
  if (!ahead_) ahead_.reset(new char[kReadAhead]);
  size_t have = aheadEnd_ - aheadPos_;
  if (have < bytes && bytes <= kReadAhead) {
    std::memmove(ahead_.get(), ahead_.get() + aheadPos_, have);  // room behind what is kept
    aheadPos_ = 0;
    aheadEnd_ = have;
    ssize_t n = recv(fd_, ahead_.get() + have, kReadAhead - have, MSG_DONTWAIT);
    if (n > 0) aheadEnd_ += static_cast<size_t>(n);
    if (n == 0)
      return setError(weftRemoteError,
                      "%s closed its connection (process exited, or its communicator failed)",
                      peer_.c_str());
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return setError(weftRemoteError, "connection to %s broke while receiving: %s", peer_.c_str(),
                      strerror(errno));
    have = aheadEnd_;
  }
  *got = std::min(bytes, have);
  std::memcpy(data, ahead_.get() + aheadPos_, *got);
  return weftSuccess;
}

}  // namespace weft
