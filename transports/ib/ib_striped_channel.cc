// See ib_striped_channel.h.
#include "transports/ib/ib_striped_channel.h"

#include <algorithm>

#include "base/error.h"

namespace weft {

template <typename Move>
weftResult_t IbStripedChannel::stripe(size_t bytes, size_t* moved, Move move) {
  *moved = 0;
  const uint64_t n = qps_.size();
  while (*moved < bytes) {
    IbConnection* qp = current();
    const size_t room = n == 1 ? bytes : kStripeBytes - pos_ % kStripeBytes;
    size_t m = 0;
    WEFT_CHECK(move(qp, *moved, std::min(bytes - *moved, room), &m));
    if (m == 0) break;  // this QP would block; the next byte must go on it
    *moved += m;
    pos_ += m;
  }
  return weftSuccess;
}

weftResult_t IbStripedChannel::trySend(const void* data, size_t bytes, size_t* moved) {
  const char* d = static_cast<const char*>(data);
  return stripe(bytes, moved, [d](IbConnection* qp, size_t off, size_t b, size_t* m) {
    return qp->trySend(d + off, b, m);
  });
}

weftResult_t IbStripedChannel::tryRecv(void* data, size_t bytes, size_t* moved) {
  char* d = static_cast<char*>(data);
  return stripe(bytes, moved, [d](IbConnection* qp, size_t off, size_t b, size_t* m) {
    return qp->tryRecv(d + off, b, m);
  });
}

weftResult_t IbStripedChannel::tryPeek(void* data, size_t bytes, size_t* got) {
  // Piece by piece along the stream from pos_, each from the QP that carries it.
  *got = 0;
  uint64_t at = pos_;
  while (*got < bytes) {
    IbConnection* qp = qps_[qps_.size() == 1 ? 0 : (at / kStripeBytes) % qps_.size()];
    const size_t inStripe = static_cast<size_t>(kStripeBytes - at % kStripeBytes);
    const size_t want = std::min(bytes - *got, inStripe);
    size_t n = 0;
    WEFT_CHECK(qp->tryPeek(static_cast<char*>(data) + *got, want, &n));
    *got += n;
    at += n;
    if (n < want) break;
  }
  return weftSuccess;
}

weftResult_t IbStripedChannel::tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr,
                                      uint32_t rkey, size_t bytes, bool* posted) {
  return current()->tryPut(localAddr, lkey, remoteAddr, rkey, bytes, posted);
}

}  // namespace weft
