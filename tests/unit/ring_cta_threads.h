// Test harness for the GPU ring's schedule on the host (collectives/kernels/
// ring_call.h): a call's common fields, and every rank's CTAs as threads that
// run runRingCta, the code each CTA of the kernel runs. Shared by the
// schedule tests (ring_call_test.cc) and the proxy tests (ring_proxy_test.cc).
#pragma once

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "collectives/kernels/ring_call.h"

namespace weft::test {

// A call at ring position `pos` of `n` over `nctas` CTAs of 4-byte elements,
// every other field zero (channels and message numbers are the caller's).
inline dev::RingCall ringCall(int32_t kind, const void* in, void* out, uint64_t count, int pos,
                              int n, int nctas, const int* abort, const int32_t* rankAt = nullptr) {
  dev::RingCall call;
  std::memset(&call, 0, sizeof(call));
  call.kind = kind;
  call.in = in;
  call.out = out;
  call.count = count;
  call.rank = pos;
  call.nranks = n;
  call.nctas = nctas;
  call.elemBytes = 4;
  call.abort = abort;
  call.rankAt = rankAt;
  return call;
}

// Starts one thread per CTA of every call; join() (or the destructor) waits.
template <typename T, typename Op>
class RingCtaThreads {
 public:
  RingCtaThreads(std::vector<dev::RingCall>& calls, int nctas)
      : shared_(calls.size() * static_cast<size_t>(nctas)),
        running_(static_cast<int>(shared_.size())) {
    for (size_t r = 0; r < calls.size(); ++r)
      for (int c = 0; c < nctas; ++c)
        threads_.emplace_back([this, &calls, r, c, nctas] {
          dev::runRingCta<T, Op>(&calls[r], c, dev::HostLanes{},
                                 &shared_[r * static_cast<size_t>(nctas) + c]);
          running_.fetch_sub(1);
        });
  }
  ~RingCtaThreads() { join(); }
  RingCtaThreads(const RingCtaThreads&) = delete;
  RingCtaThreads& operator=(const RingCtaThreads&) = delete;
  bool running() const { return running_.load() > 0; }
  void join() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  std::vector<int> shared_;
  std::atomic<int> running_;
  std::vector<std::thread> threads_;
};

}  // namespace weft::test
