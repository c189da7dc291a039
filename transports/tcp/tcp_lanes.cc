// See tcp_lanes.h.
#include "transports/tcp/tcp_lanes.h"

#include <algorithm>

#include "base/error.h"

namespace weft {

TcpLanes::TcpLanes(std::vector<Channel*> lanes) : lanes_(std::move(lanes)), next_(lanes_.size()) {
  for (size_t l = 0; l < lanes_.size(); ++l) next_[l] = l * kPieceBytes;
}

// Stream position of lane l's next byte after it moved `m` more.
void TcpLanes::advance(size_t l, size_t m) {
  next_[l] += m;
  if (next_[l] % kPieceBytes == 0) next_[l] += (lanes_.size() - 1) * kPieceBytes;
}

template <typename Move>
weftResult_t TcpLanes::stripe(size_t bytes, size_t* moved, Move move) {
  const uint64_t end = pos_ + bytes;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    // Lane l moves its pieces of [pos_, end) in order until it would block.
    while (next_[l] < end) {
      const uint64_t at = next_[l];
      const size_t len =
          static_cast<size_t>(std::min(end, at - at % kPieceBytes + kPieceBytes) - at);
      size_t m = 0;
      WEFT_CHECK(move(lanes_[l], static_cast<size_t>(at - pos_), len, &m));
      if (m == 0) break;
      advance(l, m);
    }
  }
  // The stream has moved up to the first byte some lane still owes.
  uint64_t first = end;
  for (uint64_t n : next_) first = std::min(first, n);
  *moved = static_cast<size_t>(first - pos_);
  pos_ = first;
  return weftSuccess;
}

int TcpLanes::waitFd() const {
  // The lane that owes the stream's next byte: nothing completes without it.
  for (size_t l = 0; l < lanes_.size(); ++l)
    if (next_[l] == pos_) return lanes_[l]->waitFd();
  return lanes_[(pos_ / kPieceBytes) % lanes_.size()]->waitFd();
}

weftResult_t TcpLanes::trySend(const void* data, size_t bytes, size_t* moved) {
  const char* d = static_cast<const char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->trySend(d + off, b, m);
  });
}

weftResult_t TcpLanes::trySendStable(const void* data, size_t bytes, size_t* moved) {
  const char* d = static_cast<const char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->trySendStable(d + off, b, m);
  });
}

weftResult_t TcpLanes::tryRecv(void* data, size_t bytes, size_t* moved) {
  char* d = static_cast<char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->tryRecv(d + off, b, m);
  });
}

weftResult_t TcpLanes::tryPeek(void* data, size_t bytes, size_t* got) {
  *got = 0;
  const size_t lane = (pos_ / kPieceBytes) % lanes_.size();
  if (next_[lane] != pos_) return weftSuccess;
  const size_t inPiece = static_cast<size_t>(kPieceBytes - pos_ % kPieceBytes);
  return lanes_[lane]->tryPeek(data, bytes < inPiece ? bytes : inPiece, got);
}

}  // namespace weft
