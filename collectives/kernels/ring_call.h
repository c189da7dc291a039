// One collective (allreduce, allgather, reduce-scatter, broadcast or reduce)
// of the GPU-driven ring between processes, as the kernel sees it: the
// argument block the host writes into pinned memory before the stream lets
// the kernel start (src/device/device_ring.h), and what each CTA does with
// it. Host-device code: the CUDA kernel (ring_call_kernel.cu) and the fake
// CUDA of the tests (threads as CTAs) run this same function.
//
// The buffer (allgather, reduce-scatter: every rank's block alike) is cut
// into one contiguous share per CTA; CTA c runs the ring schedule
// (ring_allreduce_schedule.h, ring_block_schedule.h, ring_chain_schedule.h)
// on its share over its own pair of channels (send[c] to the next position,
// recv[c] from the previous one), so CTAs never share a FIFO. Message
// numbers continue from call to call: the host keeps, per CTA, the number of
// messages its send and receive channels carried so far (sendSeq[c],
// recvSeq[c]) and adds ringCallMessages() of each call for each link, which
// both ends of a link compute alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/kernels/ring_allreduce_schedule.h"
#include "collectives/kernels/ring_block_schedule.h"
#include "collectives/kernels/ring_chain_schedule.h"

namespace weft {
namespace dev {

constexpr int kMaxRingCtas = 32;
constexpr int32_t kRingCtaDone = 1;
constexpr int32_t kRingCtaAborted = 2;
// Written when a CTA begins (by the launcher's wrapper: the CUDA kernel, or
// the fake's CTA thread), read by the host only to say in a timeout's error
// whether the kernel started; nothing waits on it.
constexpr int32_t kRingCtaStarted = 3;

enum RingKind : int32_t {
  kRingAllReduce = 0,
  kRingAllGather = 1,
  kRingReduceScatter = 2,
  kRingBroadcast = 3,
  kRingReduce = 4
};

struct RingCall {
  const void* in;  // device-visible addresses
  void* out;
  uint64_t count;  // elements (allgather, reduce-scatter: of one rank's block)
  int32_t rank;    // our ring position
  int32_t nranks;
  int32_t nctas;
  int32_t elemBytes;
  int32_t kind;           // RingKind
  int32_t rootPos;        // broadcast, reduce: the root's ring position
  const int* abort;       // the call's abort word (device-visible): non-zero stops every wait
  const int32_t* rankAt;  // [position] -> rank (device-visible; allgather, reduce-scatter)
  uint64_t sendSeq[kMaxRingCtas];  // the call's first message number on send[c]
  uint64_t recvSeq[kMaxRingCtas];  // and on recv[c]
  Channel send[kMaxRingCtas];
  Channel recv[kMaxRingCtas];
  int32_t status[kMaxRingCtas];  // 0, then kRingCtaStarted, then kRingCtaDone or kRingCtaAborted
};
static_assert(sizeof(RingCall) % sizeof(unsigned) == 0, "the kernel copies it word by word");

// CTA c's share of `count` elements: whole multiples of 64 elements (so that
// shares start aligned), the last CTA taking the remainder; empty shares are
// fine (len 0).
WEFT_HD void ringCtaShare(uint64_t count, int nctas, int c, uint64_t* begin, uint64_t* len) {
  uint64_t per = (count + static_cast<uint64_t>(nctas) - 1) / static_cast<uint64_t>(nctas);
  per = (per + 63) / 64 * 64;
  const uint64_t b = per * static_cast<uint64_t>(c);
  const uint64_t e = b + per < count ? b + per : count;
  *begin = b < count ? b : count;
  *len = b < e ? e - b : 0;
}

// Messages each channel of the ring carries (sent by one rank, received by
// the next) for `count` elements of `elemBytes` with `slotBytes` slots: the
// schedule moves every piece through 2(n-1) steps.
WEFT_HD uint64_t ringMessages(uint64_t count, int nranks, uint32_t slotBytes, int elemBytes) {
  if (nranks < 2 || count == 0) return 0;
  const uint64_t n = static_cast<uint64_t>(nranks);
  const uint64_t chunk = ringChunk(count, nranks);
  const uint64_t pieceElems = slotBytes / static_cast<uint64_t>(elemBytes);
  const uint64_t pieces = (chunk + pieceElems - 1) / pieceElems;
  return pieces * (2 * n - 2);
}

// The messages of one CTA's share (`count` elements of it) of a call of
// `kind` on the link from position `from` to from + 1 (rooted kinds leave
// one link idle; the others load every link alike).
WEFT_HD uint64_t ringCallMessages(int32_t kind, uint64_t count, int nranks, uint32_t slotBytes,
                                  int elemBytes, int from = 0, int rootPos = 0) {
  switch (kind) {
    case kRingAllReduce:
      return ringMessages(count, nranks, slotBytes, elemBytes);
    case kRingBroadcast:
    case kRingReduce:
      return ringChainMessages(kind == kRingBroadcast, count, nranks, slotBytes, elemBytes, from,
                               rootPos);
    default:
      return ringBlockMessages(count, nranks, slotBytes, elemBytes);
  }
}

// What CTA `c` of the kernel does. The abort word is checked first, so a call
// that the host gave up before the stream reached it touches no FIFO.
// `Kind` >= 0 compiles only that kind's schedule (the CUDA kernels, one per
// kind, keep their code small); -1 follows call->kind (host threads).
template <typename T, typename Op, int Kind = -1, typename Lanes>
WEFT_HD void runRingCta(RingCall* call, int c, const Lanes& lanes, int* shared) {
  bool ok = loadRelaxed(call->abort) == 0;
  lanes.sync();  // every lane has read the abort word before lane 0 may write status
  if (ok) {
    uint64_t begin = 0, len = 0;
    ringCtaShare(call->count, call->nctas, c, &begin, &len);
    RingArgs ring{call->rank,    call->nranks,     call->send[c],
                  call->recv[c], call->sendSeq[c], call->recvSeq[c]};
    // A buffer the kind does not use on this rank may be null (broadcast's
    // input off the root, reduce's output off it).
    const T* in = call->in != nullptr ? static_cast<const T*>(call->in) + begin : nullptr;
    T* out = call->out != nullptr ? static_cast<T*>(call->out) + begin : nullptr;
    const size_t n = static_cast<size_t>(len), stride = static_cast<size_t>(call->count);
    const int32_t kind = Kind >= 0 ? Kind : call->kind;
    if constexpr (Kind < 0 || Kind == kRingAllGather)
      if (kind == kRingAllGather)
        ok = ringAllgather<T>(in, out, n, stride, call->rankAt, ring, lanes, shared);
    if constexpr (Kind < 0 || Kind == kRingReduceScatter)
      if (kind == kRingReduceScatter)
        ok = ringReduceScatter<T, Op>(in, out, n, stride, call->rankAt, ring, lanes, shared);
    if constexpr (Kind < 0 || Kind == kRingAllReduce)
      if (kind == kRingAllReduce) ok = ringAllreduce<T, Op>(in, out, n, ring, lanes, shared);
    if constexpr (Kind < 0 || Kind == kRingBroadcast)
      if (kind == kRingBroadcast)
        ok = ringBroadcast<T>(in, out, n, call->rootPos, ring, lanes, shared);
    if constexpr (Kind < 0 || Kind == kRingReduce)
      if (kind == kRingReduce)
        ok = ringReduce<T, Op>(in, out, n, call->rootPos, ring, lanes, shared);
  }
  if (lanes.index() == 0) call->status[c] = ok ? kRingCtaDone : kRingCtaAborted;
}

}  // namespace dev
}  // namespace weft
