// One ordered byte stream spread over several channels ("lanes"): TCP's bulk
// connections of one stream and direction (tcp_transport.h), and the queue
// pairs of one verbs stream (ib_transport.h). Stream byte p travels on lane
// (p / kPieceBytes) % lanes, so both ends know where every byte goes without
// a header, and each lane is an ordered byte stream of its own.
//
// The lanes move side by side: within the range a call is given, each lane
// moves its own pieces in order until it would block, and *moved reports the
// stream's contiguous progress (up to the first byte a lane still owes). So a
// call may have moved bytes past *moved; the caller comes back with the rest
// of the same buffer (the flow engine always does), and a lane resumes where
// it stopped, at the same address, which is also what splice and verbs'
// zero-copy sends need.
//
// Why lanes, over loopback where bandwidth is the CPU's: on one connection the
// receiver's copy out of the socket and the sender's copy in take turns on the
// socket's lock. With a 512 KiB chunk in 128 KiB pieces on two connections the
// receiver copies one piece out while the sender copies the next in; the
// bytes in flight stay one chunk (more spilled the CPU cache). Larger pieces
// (each chunk on the lanes one after the other) lose the gain (measured:
// docs/tuning.md, "Lanes"). Over a real network several connections, or queue
// pairs, also get past one flow's window, as NCCL's sockets per thread and
// QPs per connection do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/channel.h"
#include "transports/rdma_memory.h"

namespace weft {

class StripedChannel : public Channel, public RemoteWrites {
 public:
  // Stream bytes on one lane before the next lane takes over.
  static constexpr uint64_t kPieceBytes = 128 << 10;

  // `lanes`: one channel each, in the same order on both ends (not owned).
  explicit StripedChannel(std::vector<Channel*> lanes);
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  // Each piece is sent stable on its lane; a lane's partly sent piece is the
  // next thing this channel sends (pos_ stays on it), as splice requires.
  weftResult_t trySendStable(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  // The next stream bytes, piece by piece from the lanes that carry them,
  // stopping at a lane that ran ahead (its next bytes are not the stream's).
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override;
  // The lane that carries the next stream byte: the only one progress waits on.
  ChannelWake wake() const override;
  // Every lane's peer is the same rank: its first lane answers.
  weftResult_t checkPeer() const override { return lanes_[0]->checkPeer(); }
  const std::string& peerName() const override { return lanes_[0]->peerName(); }
  // One-sided writes go on the lane that carries the next stream byte, so
  // that they are ordered before it and all that follows. Between sends
  // (a partly moved send is finished first, as on every channel) no lane has
  // sent past that byte.
  RemoteWrites* remoteWrites() override {
    return lanes_[0]->remoteWrites() != nullptr ? this : nullptr;
  }
  weftResult_t tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                      size_t bytes, bool* posted) override;

 private:
  template <typename Move>
  weftResult_t stripe(size_t bytes, size_t* moved, Move move);
  void advance(size_t lane, size_t m);
  size_t laneOf(uint64_t at) const { return (at / kPieceBytes) % lanes_.size(); }

  std::vector<Channel*> lanes_;
  uint64_t pos_ = 0;            // stream bytes moved so far, every one before it too
  std::vector<uint64_t> next_;  // per lane: the stream position of its next byte
};

}  // namespace weft
