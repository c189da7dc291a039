// The channel contract (docs/architecture.md) as device-side (and host-side) functions:
// a one-way FIFO of `nslots` slots of `slotBytes`, living where the receiver
// reads fastest, with a `tail` counter (messages posted, written by the
// sender) and a `head` counter (messages consumed, written by the receiver).
// Message k always uses slot k % nslots and carries its byte length in a
// per-slot size word, so the sender may post short (even empty) messages.
//
// Credit accounting: the sender may fill message k once k - head < nslots,
// i.e. once the receiver has consumed message k - nslots from the same slot.
//
// A group of cooperating threads ("lanes": a CUDA block, or one host thread)
// calls every function together. Lane 0 alone touches the counters; the
// lanes' barrier orders their data accesses around it (see atomics.h).
//
// Every wait returns false when *abort becomes non-zero (the host proxy sets it
// on a timeout, a dead peer or weftCommAbort), so a kernel never hangs.
//
// Device API for users (in the spirit of MSCCL++'s channels): waitCredit/slot/
// post on the sending side ("put" + "signal"), waitData/consume on the
// receiving side ("wait" + "flush"); see docs/examples/fused_exchange.cu and
// collectives/kernels/ring_allreduce_schedule.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/device/atomics.h"

namespace weft {
namespace dev {

struct Channel {
  unsigned char* slots;  // nslots * slotBytes, in the receiver's memory
  uint64_t* sizes;       // nslots byte lengths, next to the slots
  uint64_t* tail;        // messages posted (sender writes, receiver reads)
  uint64_t* head;        // messages consumed (receiver writes, sender reads)
  uint32_t nslots;
  uint32_t slotBytes;
  const int* abort;  // non-zero: give up every wait
};

// One host thread as a lane group.
struct HostLanes {
  WEFT_HD int index() const { return 0; }
  WEFT_HD int count() const { return 1; }
  WEFT_HD void sync() const {}
};

#if defined(__CUDACC__)
// A CUDA block as a lane group (blockDim.x threads, one dimension).
struct BlockLanes {
  __device__ int index() const { return static_cast<int>(threadIdx.x); }
  __device__ int count() const { return static_cast<int>(blockDim.x); }
  __device__ void sync() const { __syncthreads(); }
};
#endif

// Lane 0 spins until `ready` holds; every lane learns the outcome.
template <typename Lanes, typename Ready>
WEFT_HD bool waitFor(const Channel& ch, const Lanes& lanes, int* shared, Ready ready) {
  if (lanes.index() == 0) {
    int ok = 1;
    while (!ready()) {
      if (loadRelaxed(ch.abort) != 0) {
        ok = 0;
        break;
      }
      pause();
    }
    *shared = ok;
  }
  lanes.sync();
  const bool ok = *shared != 0;
  lanes.sync();  // `shared` may be reused by the next wait
  return ok;
}

// Sender: wait until message k may be written.
template <typename Lanes>
WEFT_HD bool waitCredit(const Channel& ch, uint64_t k, const Lanes& lanes, int* shared) {
  return waitFor(ch, lanes, shared, [&]() { return k - loadAcquire(ch.head) < ch.nslots; });
}

WEFT_HD unsigned char* slotOf(const Channel& ch, uint64_t k) {
  return ch.slots + static_cast<size_t>(k % ch.nslots) * ch.slotBytes;
}

// Sender: message k (bytes long) is written by every lane; publish it.
template <typename Lanes>
WEFT_HD void post(const Channel& ch, uint64_t k, uint64_t bytes, const Lanes& lanes) {
  lanes.sync();  // every lane's slot writes happen before lane 0's release
  if (lanes.index() == 0) {
    ch.sizes[k % ch.nslots] = bytes;  // ordered by the release below
    storeRelease(ch.tail, k + 1);
  }
}

// Receiver: wait until message k has arrived; returns its length through *bytes.
template <typename Lanes>
WEFT_HD bool waitData(const Channel& ch, uint64_t k, const Lanes& lanes, int* shared,
                      uint64_t* bytes) {
  if (!waitFor(ch, lanes, shared, [&]() { return loadAcquire(ch.tail) > k; })) return false;
  *bytes = ch.sizes[k % ch.nslots];
  return true;
}

// Receiver: every lane is done reading message k; return its slot.
template <typename Lanes>
WEFT_HD void consume(const Channel& ch, uint64_t k, const Lanes& lanes) {
  lanes.sync();  // every lane's slot reads happen before the credit goes back
  if (lanes.index() == 0) storeRelease(ch.head, k + 1);
}

}  // namespace dev
}  // namespace weft
