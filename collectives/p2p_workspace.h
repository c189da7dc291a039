// The memory point-to-point and all-to-all calls plan in (point_to_point.cc), kept
// by the communicator: each call clears these vectors but keeps their
// capacity, so after the first call of a shape no call allocates.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/coll_context.h"
#include "collectives/p2p_header.h"

namespace weft {

// The transfers to one peer in one direction: flowOps[first, first + count),
// in call order (which keeps them in that order on the wire).
struct P2PFlow {
  bool send;
  int peer;
  size_t first;
  size_t count;
};

struct P2PWorkspace {
  std::vector<P2POp> ops;  // all-to-all's transfers, built per call
  std::vector<P2PFlow> flows;
  std::vector<int> flowOf;  // [op]: its flow, or -1 for a transfer to ourselves
  std::vector<const P2POp*> flowOps;
  std::vector<size_t> fill;  // [flow]: ops placed so far
  std::vector<const P2POp*> selfSends, selfRecvs;
  std::vector<P2PHeader> headers;   // one per op: sent, or received into
  std::vector<size_t> firstHeader;  // [flow]: where its ops' headers start in headers
  std::vector<char> packed;         // per send: header then its data's head, back to back
  std::vector<size_t> packedAt;     // [header index]: offset in packed, or kNotPacked
  char padSink[kP2PHeaderPad];      // where receives put the padding before large data
};

}  // namespace weft
