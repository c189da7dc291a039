// One direction of a TCP stream's bulk data spread over several connections
// ("lanes"). Stream byte p travels on lane (p / kPieceBytes) % lanes, so both
// ends know where every byte goes without a header, and each lane is an
// ordered byte stream of its own (a TcpChannel, with its read-ahead and its
// splice state).
//
// The lanes move side by side: within the range a call is given, each lane
// moves its own pieces in order until it would block, and *moved reports the
// stream's contiguous progress (up to the first byte a lane still owes). So a
// call may have moved bytes past *moved; the caller comes back with the rest
// of the same buffer (the flow engine always does), and a lane resumes where
// it stopped, at the same address, which is also what splice needs.
//
// Why lanes, over loopback where bandwidth is the CPU's: on one connection the
// receiver's copy out of the socket and the sender's copy in take turns on the
// socket's lock. With a 512 KiB chunk in 128 KiB pieces on two connections the
// receiver copies one piece out while the sender copies the next in; the
// bytes in flight stay one chunk (more spilled the CPU cache). Larger pieces
// (each chunk on the lanes one after the other) lose the gain (measured:
// docs/tuning.md, "Lanes"). Over a
// real network several connections also get past one flow's congestion
// window, as NCCL's sockets per thread do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/channel.h"

namespace weft {

class TcpLanes : public Channel {
 public:
  // Stream bytes on one lane before the next lane takes over.
  static constexpr uint64_t kPieceBytes = 128 << 10;

  // `lanes`: one channel per connection, in the same order on both ends (not owned).
  explicit TcpLanes(std::vector<Channel*> lanes);
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  // Each piece is sent stable on its lane; a lane's partly sent piece is the
  // next thing this channel sends (pos_ stays on it), as splice requires.
  weftResult_t trySendStable(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  // The next stream bytes, from the lane that carries them, up to the end of
  // its piece; nothing while a call is partly received (a lane ran ahead).
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override;
  // The lane that carries the next stream byte: the only one progress waits on.
  int waitFd() const override;
  const std::string& peerName() const override { return lanes_[0]->peerName(); }

 private:
  template <typename Move>
  weftResult_t stripe(size_t bytes, size_t* moved, Move move);
  void advance(size_t lane, size_t m);

  std::vector<Channel*> lanes_;
  uint64_t pos_ = 0;            // stream bytes moved so far, every one before it too
  std::vector<uint64_t> next_;  // per lane: the stream position of its next byte
};

}  // namespace weft
