// What the power-of-two allreduces (rd_allreduce.cc, rhd_allreduce.cc) share:
// who takes part, who partners whom, and their flow layout.
//
// With P the largest power of two not above n and e = n - P, ranks 0..2e-1
// fold in pairs: 2i ("folded out") sends its input to 2i+1 ("folds in"),
// which reduces the two, takes part, and sends the result back at the end.
// The P ranks that take part are renumbered 2i+1 -> i (i < e), r -> r - e
// (above); at step k a rank's partner is the one whose new index differs in
// bit k.
//
// Flows: 0 the fold (folds in: receive from rank-1; folded out: send to
// rank+1), 1 the unfold (the other way), then per step k one flow to the
// partner (2+2k) and one from it (3+2k), all on stream 0. Receiving flows
// land in staging slots of one chunk each: slot 0 the fold's, 1+k step k's.
#pragma once

#include <cstddef>
#include <cstring>

#include "collectives/coll_context.h"
#include "collectives/reduce.h"

namespace weft {

struct PairFold {
  enum class Role { kPlain, kFoldIn, kFoldedOut };
  Role role = Role::kPlain;
  int rank = 0, steps = 0, extra = 0, index = 0;

  PairFold(int myRank, int nranks) : rank(myRank) {
    while ((2 << steps) <= nranks) ++steps;
    extra = nranks - (1 << steps);
    if (rank < 2 * extra) {
      role = rank % 2 == 0 ? Role::kFoldedOut : Role::kFoldIn;
      index = rank / 2;
    } else {
      index = rank - extra;
    }
  }
  bool takesPart() const { return role != Role::kFoldedOut; }
  int rankOf(int newIndex) const { return newIndex < extra ? 2 * newIndex + 1 : newIndex + extra; }
  int partner(int step) const { return rankOf(index ^ (1 << step)); }
  // True when we hold the lower new index of step k's pair (our value goes first).
  bool lowerAt(int step) const { return ((index >> step) & 1) == 0; }
  int numFlows() const { return 2 + 2 * steps; }
  bool isSend(int f) const { return f >= 2 ? f % 2 == 0 : (f == 0) == (role == Role::kFoldedOut); }
  Channel* channel(ChannelTable* channels, int f) const {
    const int peer = f >= 2 ? partner((f - 2) / 2) : role == Role::kFoldIn ? rank - 1 : rank + 1;
    return isSend(f) ? channels->sendChannel(peer, 0) : channels->recvChannel(peer, 0);
  }
  // Flows of the step that sends on flow f, or receives on it.
  static int sendFlow(int step) { return 2 + 2 * step; }
  static int recvFlow(int step) { return 3 + 2 * step; }
};

// The chunk that leaves a slot for every receiving flow (the fold and each
// step) in staging, at most ctx.chunkBytes; a slot is one chunk plus the
// element a chunk may overrun by (ring_schedule.h).
inline size_t pairFoldChunk(const CollContext& ctx, int steps) {
  size_t chunk = ctx.stagingBytes / static_cast<size_t>(steps + 1) / 64 * 64 - 64;
  return ctx.chunkBytes < chunk ? ctx.chunkBytes : chunk;
}
inline char* pairFoldSlot(const CollContext& ctx, size_t chunk, int slot) {
  return ctx.staging + static_cast<size_t>(slot) * (chunk + 64);
}

// One rank, or nothing to reduce: the input is the result. True when done so.
inline bool pairFoldTrivial(const CollContext& ctx, const CollArgs& args) {
  const size_t bytes = args.count * datatypeSize(args.datatype);
  if (ctx.nranks > 1 && bytes > 0) return false;
  if (args.recvbuff != args.sendbuff && bytes > 0) std::memcpy(args.recvbuff, args.sendbuff, bytes);
  return true;
}

}  // namespace weft
