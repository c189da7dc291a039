// See striped_channel.h.
#include "transports/striped_channel.h"

#include <algorithm>

#include "base/error.h"

namespace weft {

StripedChannel::StripedChannel(std::vector<Channel*> lanes)
    : lanes_(std::move(lanes)), next_(lanes_.size()) {
  for (size_t l = 0; l < lanes_.size(); ++l) next_[l] = l * kPieceBytes;
}

// Stream position of lane l's next byte after it moved `m` more.
void StripedChannel::advance(size_t l, size_t m) {
  next_[l] += m;
  if (next_[l] % kPieceBytes == 0) next_[l] += (lanes_.size() - 1) * kPieceBytes;
}

template <typename Move>
weftResult_t StripedChannel::stripe(size_t bytes, size_t* moved, Move move) {
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

ChannelWake StripedChannel::wake() const {
  // The lane that owes the stream's next byte: nothing completes without it.
  for (size_t l = 0; l < lanes_.size(); ++l)
    if (next_[l] == pos_) return lanes_[l]->wake();
  return lanes_[laneOf(pos_)]->wake();
}

weftResult_t StripedChannel::trySend(const void* data, size_t bytes, size_t* moved) {
  const char* d = static_cast<const char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->trySend(d + off, b, m);
  });
}

weftResult_t StripedChannel::trySendStable(const void* data, size_t bytes, size_t* moved) {
  const char* d = static_cast<const char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->trySendStable(d + off, b, m);
  });
}

weftResult_t StripedChannel::tryRecv(void* data, size_t bytes, size_t* moved) {
  char* d = static_cast<char*>(data);
  return stripe(bytes, moved, [d](Channel* lane, size_t off, size_t b, size_t* m) {
    return lane->tryRecv(d + off, b, m);
  });
}

weftResult_t StripedChannel::tryPeek(void* data, size_t bytes, size_t* got) {
  *got = 0;
  for (uint64_t at = pos_; *got < bytes;) {
    const size_t lane = laneOf(at);
    if (next_[lane] != at) break;  // it ran ahead: its next bytes come later in the stream
    const size_t inPiece = static_cast<size_t>(kPieceBytes - at % kPieceBytes);
    const size_t want = std::min(bytes - *got, inPiece);
    size_t n = 0;
    WEFT_CHECK(lanes_[lane]->tryPeek(static_cast<char*>(data) + *got, want, &n));
    *got += n;
    at += n;
    if (n < want) break;
  }
  return weftSuccess;
}

weftResult_t StripedChannel::tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr,
                                    uint32_t rkey, size_t bytes, bool* posted) {
  return lanes_[laneOf(pos_)]->remoteWrites()->tryPut(localAddr, lkey, remoteAddr, rkey, bytes,
                                                      posted);
}

}  // namespace weft
