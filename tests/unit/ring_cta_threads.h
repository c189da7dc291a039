// Test harness for the GPU ring's schedule on the host (collectives/kernels/
// ring_call.h): a call's common fields, and every rank's CTAs as threads that
// run runRingCta, the code each CTA of the kernel runs, each CTA as one lane
// or as several threads standing for a CUDA block's threads (ThreadLanes).
// Shared by the schedule tests (ring_call_test.cc) and the proxy tests
// (ring_proxy_test.cc).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
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

// __syncthreads for host threads: a barrier of the lanes still running (a
// lane that returned counts as arrived, as it does on Volta and later GPUs).
// The mutex makes every lane's writes before the barrier visible to every
// lane after it, as __syncthreads does within a block.
class LaneBarrier {
 public:
  explicit LaneBarrier(int lanes) : party_(lanes) {}
  void arrive() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t round = round_;
    if (++waiting_ >= party_) {
      release();
      return;
    }
    cv_.wait(lock, [&] { return round_ != round; });
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mu_);
    --party_;
    if (waiting_ > 0 && waiting_ >= party_) release();
  }

 private:
  void release() {
    waiting_ = 0;
    ++round_;
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  int party_;
  int waiting_ = 0;
  uint64_t round_ = 0;
};

// One of a CTA's lanes as a host thread: index() and count() stand for
// threadIdx.x and blockDim.x, sync() for __syncthreads. Each lane counts its
// syncs: the lanes of a CTA must all make the same number, or the schedule
// diverges (some lanes skip a barrier that others wait at).
struct ThreadLanes {
  int lane;
  int lanes;
  LaneBarrier* barrier;
  int* syncs;
  int index() const { return lane; }
  int count() const { return lanes; }
  void sync() const {
    ++*syncs;
    barrier->arrive();
  }
};

// Starts `lanes` threads per CTA of every call (one lane: dev::HostLanes);
// join() (or the destructor) waits.
template <typename T, typename Op>
class RingCtaThreads {
 public:
  RingCtaThreads(std::vector<dev::RingCall>& calls, int nctas, int lanes = 1)
      : lanes_(lanes),
        shared_(calls.size() * static_cast<size_t>(nctas)),
        syncs_(shared_.size() * static_cast<size_t>(lanes)),
        running_(static_cast<int>(shared_.size())) {
    for (size_t i = 0; i < shared_.size(); ++i)
      barriers_.push_back(std::make_unique<LaneBarrier>(lanes));
    for (size_t r = 0; r < calls.size(); ++r)
      for (int c = 0; c < nctas; ++c) {
        const size_t cta = r * static_cast<size_t>(nctas) + static_cast<size_t>(c);
        if (lanes == 1) {
          threads_.emplace_back([this, &calls, r, c, cta] {
            dev::runRingCta<T, Op>(&calls[r], c, dev::HostLanes{}, &shared_[cta]);
            running_.fetch_sub(1);
          });
          continue;
        }
        auto left = std::make_shared<std::atomic<int>>(lanes);  // lanes of this CTA still running
        for (int l = 0; l < lanes; ++l)
          threads_.emplace_back([this, &calls, r, c, cta, l, left] {
            LaneBarrier* barrier = barriers_[cta].get();
            const ThreadLanes lane{l, lanes_, barrier, &syncs_[at(cta, l)]};
            dev::runRingCta<T, Op>(&calls[r], c, lane, &shared_[cta]);
            barrier->leave();
            if (left->fetch_sub(1) == 1) running_.fetch_sub(1);
          });
      }
  }
  ~RingCtaThreads() { join(); }
  RingCtaThreads(const RingCtaThreads&) = delete;
  RingCtaThreads& operator=(const RingCtaThreads&) = delete;
  bool running() const { return running_.load() > 0; }
  void join() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }
  // After join: "" when every lane of each CTA made as many syncs as its
  // lane 0, else the first CTA where they differ.
  std::string divergence() const {
    for (size_t cta = 0; cta < shared_.size(); ++cta)
      for (int l = 1; l < lanes_; ++l)
        if (syncs_[at(cta, l)] != syncs_[at(cta, 0)])
          return "CTA " + std::to_string(cta) + ": lane " + std::to_string(l) + " made " +
                 std::to_string(syncs_[at(cta, l)]) + " syncs, lane 0 " +
                 std::to_string(syncs_[at(cta, 0)]);
    return "";
  }

 private:
  size_t at(size_t cta, int lane) const {
    return cta * static_cast<size_t>(lanes_) + static_cast<size_t>(lane);
  }
  const int lanes_;
  std::vector<int> shared_;
  std::vector<int> syncs_;
  std::vector<std::unique_ptr<LaneBarrier>> barriers_;
  std::atomic<int> running_;
  std::vector<std::thread> threads_;
};

}  // namespace weft::test
