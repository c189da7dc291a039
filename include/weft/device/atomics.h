// The few memory operations the channel protocol needs, written once for the
// GPU (CUDA device code) and for the host (the CPU executor and the tests run
// the very same protocol code). Counters are read by another agent: a peer GPU
// through NVLink/PCIe, the host proxy, or another process through mapped
// memory. So every counter access is at *system* scope:
//   - the writer publishes with a release store: the data it (and, through a
//     preceding block barrier, its whole block) wrote before is visible to
//     whoever observes the new counter value (PTX release is cumulative);
//   - the reader observes with an acquire load, so its later reads of the slot
//     cannot be satisfied before the counter was seen.
// Plain (relaxed) reads are used only for the abort flag, which orders nothing.
#pragma once

#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <sched.h>
#endif

#if defined(__CUDACC__)
#include <cuda/atomic>
#define WEFT_HD __host__ __device__ __forceinline__
#else
#define WEFT_HD inline
#endif

namespace weft {
namespace dev {

WEFT_HD uint64_t loadAcquire(const uint64_t* p) {
#if defined(__CUDA_ARCH__)
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*const_cast<uint64_t*>(p));
  return ref.load(cuda::memory_order_acquire);
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

WEFT_HD void storeRelease(uint64_t* p, uint64_t v) {
#if defined(__CUDA_ARCH__)
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*p);
  ref.store(v, cuda::memory_order_release);
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

WEFT_HD int loadRelaxed(const int* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const volatile int*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// A polite pause inside a wait loop: the GPU thread sleeps briefly (freeing
// issue slots for compute kernels that share the SM); a host thread gives its
// core away, since host ranks are often more than the cores (as in CI).
WEFT_HD void pause() {
#if defined(__CUDA_ARCH__)
  __nanosleep(64);
#else
  sched_yield();
#endif
}

}  // namespace dev
}  // namespace weft
