// One direction of a TCP stream's bulk data spread over several connections
// ("lanes"). Stream byte p travels on lane (p / kPieceBytes) % lanes, so both
// ends know where every byte goes without a header, and each lane is an
// ordered byte stream of its own (a TcpChannel, with its read-ahead and its
// splice state). Moves are sequential, as in IbStripedChannel: a piece goes to
// its lane until that lane would block, and the receiver drains lanes in the
// order the sender filled them.
//
// Why lanes, over loopback where bandwidth is the CPU's: a rank's recv() and
// its peer's send() into the same socket contend for the socket's lock (the
// bytes that arrive meanwhile wait in its backlog), and one socket's receive
// queue is drained by one copy at a time. A 512 KiB chunk sent as four 128 KiB
// pieces on four sockets keeps the same bytes in flight (the chunk; more made
// 16-64 MiB allreduces slower by spilling the CPU cache) but lets the kernel
// work on them side by side: two-rank allreduces of 2-64 MiB ran 1.2-1.4x
// faster (docs/tuning.md). Over a real network, several connections also get
// past one flow's congestion window, as NCCL's sockets per thread do.
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
