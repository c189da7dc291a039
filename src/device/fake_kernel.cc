// The fake CUDA's ring "kernel" (fake_runtime.h): the very schedule the GPU
// runs (collectives/kernels/ring_call.h), with one host thread per CTA, so
// that the GPU ring's protocol, its message numbering across calls and its
// abort path are tested between processes on machines without a GPU.
// Every pointer in the argument block is a device-side address; the threads
// use the fake's read-write views of the same memory instead.
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <thread>
#include <vector>

#include "collectives/kernels/ring_call.h"
#include "collectives/reduce.h"
#include "device/fake_runtime.h"

namespace weft {
namespace fake {
namespace {

// float16 / bfloat16 as stored bits, combined by weft's host reduction one
// element at a time (float32 accumulate, one rounding: as the GPU's StoredOp).
template <weftDataType_t D>
struct Half {
  uint16_t bits;
};
template <weftDataType_t D, weftRedOp_t O>
struct HalfOp {
  static Half<D> apply(Half<D> a, Half<D> b) {
    Half<D> r{};
    reduceElements(D, O, &r, &a, &b, 1);
    return r;
  }
};

template <typename T>
T* view(T* p, size_t bytes) {
  return static_cast<T*>(accessible(p, bytes));
}

void viewChannel(dev::Channel* ch) {
  ch->slots = view(ch->slots, size_t{ch->nslots} * ch->slotBytes);
  ch->sizes = view(ch->sizes, ch->nslots * sizeof(uint64_t));
  ch->tail = view(ch->tail, sizeof(uint64_t));
  ch->head = view(ch->head, sizeof(uint64_t));
}

std::atomic<uint64_t> killAfter{0};  // killDuringRingKernel (0: off)

// Kills the process once CTA 0 posted `messages` messages of this call.
void killWhenPosted(const dev::RingCall& call, uint64_t messages) {
  while (dev::loadAcquire(call.send[0].tail) < call.sendSeq[0] + messages) sched_yield();
  raise(SIGKILL);
}

template <typename T, typename Op>
void runCtas(dev::RingCall* call, int nctas) {
  dev::RingCall local = *call;
  const size_t bytes = call->count * sizeof(T);
  const size_t all = bytes * static_cast<size_t>(call->nranks);  // every rank's block
  local.in = view(call->in, call->kind == dev::kRingReduceScatter ? all : bytes);
  local.out = view(call->out, call->kind == dev::kRingAllGather ? all : bytes);
  if (call->rankAt != nullptr)
    local.rankAt = view(call->rankAt, sizeof(int32_t) * static_cast<size_t>(call->nranks));
  for (int c = 0; c < nctas; ++c) {
    viewChannel(&local.send[c]);
    viewChannel(&local.recv[c]);
  }
  std::vector<int> shared(static_cast<size_t>(nctas));
  std::vector<std::thread> ctas;
  if (uint64_t messages = killAfter.exchange(0))
    std::thread([&local, messages] { killWhenPosted(local, messages); }).detach();
  for (int c = 0; c < nctas; ++c)
    ctas.emplace_back([&, c] {
      // As the CUDA kernel: the host reads it only for a timeout's message.
      __atomic_store_n(&call->status[c], dev::kRingCtaStarted, __ATOMIC_RELAXED);
      dev::runRingCta<T, Op>(&local, c, dev::HostLanes{}, &shared[c]);
    });
  for (std::thread& t : ctas) t.join();
  for (int c = 0; c < nctas; ++c)
    __atomic_store_n(&call->status[c], local.status[c], __ATOMIC_RELAXED);
}

template <typename T>
void byOp(weftRedOp_t op, dev::RingCall* call, int nctas) {
  switch (op) {
    case weftSum:
      return runCtas<T, dev::OpSum>(call, nctas);
    case weftProd:
      return runCtas<T, dev::OpProd>(call, nctas);
    case weftMax:
      return runCtas<T, dev::OpMax>(call, nctas);
    default:
      return runCtas<T, dev::OpMin>(call, nctas);
  }
}

template <weftDataType_t D>
void halfByOp(weftRedOp_t op, dev::RingCall* call, int nctas) {
  switch (op) {
    case weftSum:
      return runCtas<Half<D>, HalfOp<D, weftSum>>(call, nctas);
    case weftProd:
      return runCtas<Half<D>, HalfOp<D, weftProd>>(call, nctas);
    case weftMax:
      return runCtas<Half<D>, HalfOp<D, weftMax>>(call, nctas);
    default:
      return runCtas<Half<D>, HalfOp<D, weftMin>>(call, nctas);
  }
}

}  // namespace

void killDuringRingKernel(uint64_t messages) { killAfter.store(messages); }

void runRingKernel(weftDataType_t type, weftRedOp_t op, dev::RingCall* call, int nctas) {
  switch (type) {
    case weftInt8:
      return byOp<int8_t>(op, call, nctas);
    case weftUint8:
      return byOp<uint8_t>(op, call, nctas);
    case weftInt32:
      return byOp<int32_t>(op, call, nctas);
    case weftUint32:
      return byOp<uint32_t>(op, call, nctas);
    case weftInt64:
      return byOp<int64_t>(op, call, nctas);
    case weftUint64:
      return byOp<uint64_t>(op, call, nctas);
    case weftFloat16:
      return halfByOp<weftFloat16>(op, call, nctas);
    case weftBfloat16:
      return halfByOp<weftBfloat16>(op, call, nctas);
    case weftFloat32:
      return byOp<float>(op, call, nctas);
    default:
      return byOp<double>(op, call, nctas);
  }
}

}  // namespace fake
}  // namespace weft
