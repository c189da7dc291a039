// Ring allgather and reduce-scatter over the device channel API, the two
// halves of ring_allreduce_schedule.h on their own, written once for the GPU
// kernel (a block as lanes) and the host tests (threads as ranks).
//
// Unlike allreduce, these collectives place data by rank: block q of the
// allgather output is rank q's input, and rank q keeps block q of the
// reduce-scatter. The ring visits ranks in its own order (nodes together,
// gpu_peer_ring.h), so `rankAt[p]` names the rank at ring position p and blocks
// are looked up through it. `count` is this CTA's share of a block and
// `stride` the whole block (elements from one rank's block to the next), so
// several CTAs split every block alike.
//
// Both move each piece (at most one slot) through n-1 steps before the next
// piece starts, so a link carries one message per step and one free slot is
// enough for progress: ringBlockMessages() = pieces * (n - 1) per channel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/kernels/ring_allreduce_schedule.h"

namespace weft {
namespace dev {

WEFT_HD uint64_t ringBlockMessages(uint64_t count, int nranks, uint32_t slotBytes, int elemBytes) {
  if (nranks < 2 || count == 0) return 0;
  const uint64_t pieceElems = slotBytes / static_cast<uint64_t>(elemBytes);
  return (count + pieceElems - 1) / pieceElems * static_cast<uint64_t>(nranks - 1);
}

// out[rankAt[p] * stride + i] = the input of the rank at position p, for
// i < count. Position p sends its own block first, then forwards what it
// receives (the block of position p - s at step s) to p + 1, except the last.
template <typename T, typename Lanes>
WEFT_HD bool ringAllgather(const T* in, T* out, size_t count, size_t stride, const int32_t* rankAt,
                           const RingArgs& ring, const Lanes& lanes, int* shared) {
  const int n = ring.nranks;
  T* mine = out + static_cast<size_t>(rankAt[ring.rank]) * stride;
  if (mine != in) copyInto(mine, in, count, lanes);  // in place: already there
  lanes.sync();
  if (n == 1) return true;
  const size_t pieceElems = ring.send.slotBytes / sizeof(T);
  uint64_t sent = ring.sendSeq, received = ring.recvSeq;
  for (size_t offset = 0; offset < count; offset += pieceElems) {
    const size_t len = count - offset < pieceElems ? count - offset : pieceElems;
    if (!sendPiece(ring, &sent, mine + offset, len, lanes, shared)) return false;
    for (int s = 1; s < n; ++s) {
      const int from = (ring.rank - s + n) % n;
      T* block = out + static_cast<size_t>(rankAt[from]) * stride + offset;
      if (!recvCopySend(ring, &received, &sent, block, s < n - 1, lanes, shared)) return false;
    }
  }
  lanes.sync();
  return true;
}

// out[i] = reduction over ranks of in[rankAt[p] * stride + i] for our
// position p, i < count. At step s position p works on the block of position
// p - s - 1: it sends its own input of it (s = 0), adds its input to the
// partial sum it receives and passes it on (0 < s < n - 1), and at the last
// step, whose block is its own, writes the sum into out. In place (out is our
// block of in) is fine: each element of it is read once, then written.
template <typename T, typename Op, typename Lanes>
WEFT_HD bool ringReduceScatter(const T* in, T* out, size_t count, size_t stride,
                               const int32_t* rankAt, const RingArgs& ring, const Lanes& lanes,
                               int* shared) {
  const int n = ring.nranks;
  if (n == 1) {
    const T* mine = in + static_cast<size_t>(rankAt[0]) * stride;
    if (mine != out) copyInto(out, mine, count, lanes);
    lanes.sync();
    return true;
  }
  auto blockAt = [&](int s) {
    return in + static_cast<size_t>(rankAt[(ring.rank - s - 1 + 2 * n) % n]) * stride;
  };
  const size_t pieceElems = ring.send.slotBytes / sizeof(T);
  uint64_t sent = ring.sendSeq, received = ring.recvSeq;
  uint64_t bytes = 0;
  for (size_t offset = 0; offset < count; offset += pieceElems) {
    const size_t len = count - offset < pieceElems ? count - offset : pieceElems;
    if (!sendPiece(ring, &sent, blockAt(0) + offset, len, lanes, shared)) return false;
    for (int s = 1; s < n; ++s) {
      if (!waitData(ring.recv, received, lanes, shared, &bytes)) return false;
      const size_t got = static_cast<size_t>(bytes / sizeof(T));
      const T* incoming = reinterpret_cast<const T*>(slotOf(ring.recv, received));
      if (s < n - 1) {
        if (!waitCredit(ring.send, sent, lanes, shared)) return false;
        combineInto<T, Op>(reinterpret_cast<T*>(slotOf(ring.send, sent)), incoming,
                           blockAt(s) + offset, got, lanes);
        post(ring.send, sent++, got * sizeof(T), lanes);
      } else {
        combineInto<T, Op>(out + offset, incoming, blockAt(s) + offset, got, lanes);
      }
      consume(ring.recv, received++, lanes);
    }
  }
  lanes.sync();
  return true;
}

}  // namespace dev
}  // namespace weft
