// One allreduce of the GPU-driven ring between processes, as the kernel sees
// it: the argument block the host writes into pinned memory before the stream
// lets the kernel start (src/device/device_ring.h), and what each CTA does
// with it. Host-device code: the CUDA kernel (ring_kernel.cu) and the fake
// CUDA of the tests (threads as CTAs) run this same function.
//
// The buffer is cut into one contiguous share per CTA; CTA c runs the ring
// schedule of ring_allreduce_schedule.h on its share over its own pair of
// channels (send[c] to rank + 1, recv[c] from rank - 1), so CTAs never share
// a FIFO. Message numbers continue from call to call: the host keeps, per
// CTA, the number of messages its channels carried so far (seq[c]) and adds
// ringMessages() of each call, which every rank computes alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/kernels/ring_allreduce_schedule.h"

namespace weft {
namespace dev {

constexpr int kMaxRingCtas = 32;
constexpr int32_t kRingCtaDone = 1;
constexpr int32_t kRingCtaAborted = 2;

struct RingCall {
  const void* in;  // device-visible addresses
  void* out;
  uint64_t count;  // elements
  int32_t rank;
  int32_t nranks;
  int32_t nctas;
  int32_t elemBytes;
  const int* abort;  // the call's abort word (device-visible): non-zero stops every wait
  uint64_t seq[kMaxRingCtas];
  Channel send[kMaxRingCtas];
  Channel recv[kMaxRingCtas];
  int32_t status[kMaxRingCtas];  // each CTA writes kRingCtaDone or kRingCtaAborted at its end
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
  const uint64_t chunk = (count + n - 1) / n;
  const uint64_t pieceElems = slotBytes / static_cast<uint64_t>(elemBytes);
  const uint64_t pieces = (chunk + pieceElems - 1) / pieceElems;
  return pieces * (2 * n - 2);
}

// What CTA `c` of the kernel does. The abort word is checked first, so a call
// that the host gave up before the stream reached it touches no FIFO.
template <typename T, typename Op, typename Lanes>
WEFT_HD void runRingCta(RingCall* call, int c, const Lanes& lanes, int* shared) {
  bool ok = loadRelaxed(call->abort) == 0;
  lanes.sync();  // every lane has read the abort word before lane 0 may write status
  if (ok) {
    uint64_t begin = 0, len = 0;
    ringCtaShare(call->count, call->nctas, c, &begin, &len);
    RingArgs ring{call->rank, call->nranks, call->send[c], call->recv[c], call->seq[c]};
    ok = ringAllreduce<T, Op>(static_cast<const T*>(call->in) + begin,
                              static_cast<T*>(call->out) + begin, static_cast<size_t>(len), ring,
                              lanes, shared);
  }
  if (lanes.index() == 0) call->status[c] = ok ? kRingCtaDone : kRingCtaAborted;
}

}  // namespace dev
}  // namespace weft
