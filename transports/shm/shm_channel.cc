// Shared-memory byte ring (see shm_channel.h for the ordering argument).
#include "transports/shm/shm_channel.h"

#include <cstring>

#include "base/error.h"
#include "bootstrap/socket.h"

namespace weft {

size_t shmFifoFootprint(size_t capacity) {
  size_t bytes = sizeof(ShmFifoHeader) + capacity;
  return (bytes + 4095) & ~static_cast<size_t>(4095);
}

ShmChannel::ShmChannel(char* fifo, size_t capacity, bool isSender, Doorbell* wake, int deathFd,
                       std::string peer)
    : hdr_(reinterpret_cast<ShmFifoHeader*>(fifo)),
      data_(fifo + sizeof(ShmFifoHeader)),
      capacity_(capacity),
      wake_(wake),
      deathFd_(deathFd),
      peer_(std::move(peer)) {
  mine_ = isSender ? hdr_->tail.load(std::memory_order_relaxed)
                   : hdr_->head.load(std::memory_order_relaxed);
  seenHead_ = isSender ? hdr_->head.load(std::memory_order_acquire) : 0;
  seenTail_ = isSender ? 0 : hdr_->tail.load(std::memory_order_acquire);
}

namespace {
constexpr uint64_t kShmInlineBusy = ~uint64_t{0};  // length bits 63: never a valid copy
constexpr int kInlineWords = static_cast<int>(kShmInlineBytes / 8);
}  // namespace

// The seqlock's writer: busy, then the words, then the tag with release (the
// words it covers are complete for a reader that loads it with acquire). The
// words are stored with release, not relaxed: a reader whose acquire load of
// a word reads a newer copy's value then also sees (at least) this busy when
// it loads the tag again, so it never keeps a torn copy. On x86 these are
// plain stores; and unlike a release fence after busy, ThreadSanitizer
// models them. The words are atomics, so the reader's racing loads are not
// data races.
void ShmChannel::copyInline(const void* data, size_t n) {
  uint64_t words[kInlineWords] = {};
  std::memcpy(words, data, n);
  hdr_->inlineTag.store(kShmInlineBusy, std::memory_order_relaxed);
  for (int w = 0; w < static_cast<int>((n + 7) / 8); ++w)
    hdr_->inlineWords[w].store(words[w], std::memory_order_release);
  hdr_->inlineTag.store((mine_ << 6) | n, std::memory_order_release);
}

// The seqlock's reader: the tag with acquire, the words with acquire (which
// keeps the second load of the tag after them), the tag again. Same tag both
// times: the copy is the sender's bytes [start, start + length). false: take
// the bytes from the ring instead.
bool ShmChannel::readInline(void* data, size_t n) {
  const uint64_t tag = hdr_->inlineTag.load(std::memory_order_acquire);
  const uint64_t start = tag >> 6, len = tag & 63;
  if (tag == kShmInlineBusy || start > mine_ || mine_ + n > start + len) return false;
  uint64_t words[kInlineWords];
  const int nwords = static_cast<int>((len + 7) / 8);
  for (int w = 0; w < nwords; ++w) words[w] = hdr_->inlineWords[w].load(std::memory_order_acquire);
  if (hdr_->inlineTag.load(std::memory_order_relaxed) != tag) return false;
  std::memcpy(data, reinterpret_cast<const char*>(words) + (mine_ - start), n);
  return true;
}

weftResult_t ShmChannel::trySend(const void* data, size_t bytes, size_t* moved) {
  // The head last seen understates the space, never overstates it; reading the
  // receiver's line only when it falls short keeps that line in the receiver's
  // cache, so neither side pays a miss for it on each small message.
  size_t space = capacity_ - static_cast<size_t>(mine_ - seenHead_);
  if (space < bytes) {
    seenHead_ = hdr_->head.load(std::memory_order_acquire);
    space = capacity_ - static_cast<size_t>(mine_ - seenHead_);
  }
  size_t n = bytes < space ? bytes : space;
  *moved = n;
  if (n == 0) return weftSuccess;
  size_t at = static_cast<size_t>(mine_ % capacity_);
  size_t first = n < capacity_ - at ? n : capacity_ - at;
  std::memcpy(data_ + at, data, first);
  if (n > first) std::memcpy(data_, static_cast<const char*>(data) + first, n - first);
  if (n <= kShmInlineBytes) copyInline(data, n);
  mine_ += n;
  hdr_->tail.store(mine_, std::memory_order_release);
  wake_->ring();
  return weftSuccess;
}

weftResult_t ShmChannel::tryPeek(void* data, size_t bytes, size_t* got) {
  // Same acquire as tryRecv: the bytes below tail are the sender's, complete.
  // A tail seen before that already covers the request saves the load.
  size_t avail = static_cast<size_t>(seenTail_ - mine_);
  if (avail < bytes) {
    seenTail_ = hdr_->tail.load(std::memory_order_acquire);
    avail = static_cast<size_t>(seenTail_ - mine_);
  }
  size_t n = bytes < avail ? bytes : avail;
  *got = n;
  if (n == 0) return weftSuccess;  // a dead peer: checkPeer(), as waiters ask it
  if (n <= kShmInlineBytes && readInline(data, n)) return weftSuccess;
  size_t at = static_cast<size_t>(mine_ % capacity_);
  size_t first = n < capacity_ - at ? n : capacity_ - at;
  std::memcpy(data, data_ + at, first);
  if (n > first) std::memcpy(static_cast<char*>(data) + first, data_, n - first);
  return weftSuccess;
}

weftResult_t ShmChannel::tryRecv(void* data, size_t bytes, size_t* moved) {
  WEFT_CHECK(ShmChannel::tryPeek(data, bytes, moved));  // no virtual call on the hot path
  if (*moved == 0) return weftSuccess;
  mine_ += *moved;
  hdr_->head.store(mine_, std::memory_order_release);
  wake_->ring();
  return weftSuccess;
}

weftResult_t ShmChannel::checkPeer() const {
  // The socket never carries data, so readable means closed or broken.
  if (peerSocketClosed(deathFd_))
    return setError(weftRemoteError,
                    "%s exited or its communicator failed (its connection closed) while sharing "
                    "memory with us",
                    peer_.c_str());
  return weftSuccess;
}

}  // namespace weft
