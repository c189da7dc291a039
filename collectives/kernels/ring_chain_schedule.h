// Broadcast and reduce over the device channel API: a chain along the ring,
// pipelined in pieces of one slot, written once for the GPU kernel (a block
// as lanes) and the host tests (threads as ranks).
//
// Broadcast runs root -> root + 1 -> ... -> root - 1 (positions); reduce runs
// root + 1 -> ... -> root, each position adding its input to the partial sum
// on the way. So one link of the ring carries nothing: the link into the
// root (broadcast) or out of it (reduce). Per piece a link carries one
// message, so a channel's send and receive counts differ by position:
// ringChainMessages() is per link, and the caller keeps separate send and
// receive message numbers (RingArgs::sendSeq / recvSeq).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/kernels/ring_allreduce_schedule.h"

namespace weft {
namespace dev {

// Messages on the link from position `from` to from + 1 of a broadcast
// (reduce: !broadcast) of `count` elements rooted at position `rootPos`.
WEFT_HD uint64_t ringChainMessages(bool broadcast, uint64_t count, int nranks, uint32_t slotBytes,
                                   int elemBytes, int from, int rootPos) {
  if (nranks < 2 || count == 0) return 0;
  const int idle = broadcast ? (rootPos + nranks - 1) % nranks : rootPos;  // the unused link
  if (from == idle) return 0;
  const uint64_t pieceElems = slotBytes / static_cast<uint64_t>(elemBytes);
  return (count + pieceElems - 1) / pieceElems;
}

// out = the root's in, on every position (in is read at the root only; in
// place at the root when in == out).
template <typename T, typename Lanes>
WEFT_HD bool ringBroadcast(const T* in, T* out, size_t count, int rootPos, const RingArgs& ring,
                           const Lanes& lanes, int* shared) {
  const int n = ring.nranks;
  const bool root = ring.rank == rootPos;
  if (root && in != out) copyInto(out, in, count, lanes);
  lanes.sync();
  if (n == 1) return true;
  const bool last = (ring.rank + 1) % n == rootPos;  // does not forward
  const size_t pieceElems = ring.send.slotBytes / sizeof(T);
  uint64_t sent = ring.sendSeq, received = ring.recvSeq;
  for (size_t offset = 0; offset < count; offset += pieceElems) {
    const size_t len = count - offset < pieceElems ? count - offset : pieceElems;
    if (root) {
      if (!sendPiece(ring, &sent, out + offset, len, lanes, shared)) return false;
    } else if (!recvCopySend(ring, &received, &sent, out + offset, !last, lanes, shared)) {
      return false;
    }
  }
  lanes.sync();
  return true;
}

// At the root, out = the reduction over positions of in; elsewhere out is
// not touched. The first position after the root sends its input; each
// position after it adds its input to what it receives and passes it on;
// the root adds its own into out.
template <typename T, typename Op, typename Lanes>
WEFT_HD bool ringReduce(const T* in, T* out, size_t count, int rootPos, const RingArgs& ring,
                        const Lanes& lanes, int* shared) {
  const int n = ring.nranks;
  const bool root = ring.rank == rootPos;
  if (n == 1) {
    if (in != out) copyInto(out, in, count, lanes);
    lanes.sync();
    return true;
  }
  const bool first = ring.rank == (rootPos + 1) % n;  // receives nothing
  const size_t pieceElems = ring.send.slotBytes / sizeof(T);
  uint64_t sent = ring.sendSeq, received = ring.recvSeq;
  uint64_t bytes = 0;
  for (size_t offset = 0; offset < count; offset += pieceElems) {
    const size_t len = count - offset < pieceElems ? count - offset : pieceElems;
    if (first) {
      if (!sendPiece(ring, &sent, in + offset, len, lanes, shared)) return false;
      continue;
    }
    if (!waitData(ring.recv, received, lanes, shared, &bytes)) return false;
    const size_t got = static_cast<size_t>(bytes / sizeof(T));
    const T* incoming = reinterpret_cast<const T*>(slotOf(ring.recv, received));
    if (root) {
      combineInto<T, Op>(out + offset, incoming, in + offset, got, lanes);
    } else {
      if (!waitCredit(ring.send, sent, lanes, shared)) return false;
      combineInto<T, Op>(reinterpret_cast<T*>(slotOf(ring.send, sent)), incoming, in + offset, got,
                         lanes);
      post(ring.send, sent++, got * sizeof(T), lanes);
    }
    consume(ring.recv, received++, lanes);
  }
  lanes.sync();
  return true;
}

}  // namespace dev
}  // namespace weft
