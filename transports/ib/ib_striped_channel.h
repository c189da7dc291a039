// The channel the collectives see for one (peer, stream) over verbs: one byte
// stream striped over WEFT_IB_QPS_PER_CONNECTION queue pairs. Stream byte p
// travels on QP (p / stripe) % nqps, so both ends know where every byte goes
// without a header; each QP is itself an ordered byte stream, and the receiver
// drains the QPs in the order the sender filled them. A message larger than a
// stripe is therefore spread over the QPs, and smaller ones alternate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/channel.h"
#include "transports/ib/ib_connection.h"

namespace weft {

class IbStripedChannel : public Channel {
 public:
  // Bytes of stream per QP before moving to the next one.
  static constexpr uint64_t kStripeBytes = 128 << 10;

  explicit IbStripedChannel(std::vector<IbConnection*> qps) : qps_(std::move(qps)) {}
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override;
  // On the QP that carries the next stream byte, so that it precedes it.
  bool canPut() const override { return true; }
  weftResult_t tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                      size_t bytes, bool* posted) override;
  // Completion queues are polled, not slept on: the executor yields between
  // passes while a verbs channel is pending.
  int waitFd() const override { return -1; }
  const std::string& peerName() const override { return qps_[0]->peer(); }

 private:
  template <typename Move>
  weftResult_t stripe(size_t bytes, size_t* moved, Move move);
  // The QP that carries stream byte pos_.
  IbConnection* current() const {
    return qps_[qps_.size() == 1 ? 0 : (pos_ / kStripeBytes) % qps_.size()];
  }

  std::vector<IbConnection*> qps_;
  uint64_t pos_ = 0;  // stream bytes moved so far in our direction
};

}  // namespace weft
