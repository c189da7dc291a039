// Shared pieces of the GPU tests and the GPU tools: whether a GPU is visible,
// every thread's stack on SIGUSR1 (thread_stacks.h: what perf/gpu_check.sh
// sends a step that reached its time cap), and device channels for ranks that
// live on one GPU (FIFO memory in device memory, the abort flag in mapped host
// memory so the host can raise it while a kernel spins).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "thread_stacks.h"
#include "weft/device/channel.h"

namespace gpu_test {

// Installed before main, so before CUDA or weft start a thread.
inline const bool kStacksOnSigusr1 = installStackDumper();

// "256M" -> bytes (K/M/G are powers of 1024), for the GPU tools' arguments.
inline size_t parseBytes(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return static_cast<size_t>(v);
}

// Empty when a GPU can be used; otherwise why not (for "SKIPPED: ...").
inline std::string whyNoGpu() {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) return std::string("no GPU (") + cudaGetErrorString(rc) + ")";
  if (n == 0) return "no GPU";
  return "";
}

// Links r -> r+1 for `nranks` ranks on the current GPU.
class LocalRing {
 public:
  LocalRing(int nranks, uint32_t nslots, uint32_t slotBytes) : links_(nranks) {
    cudaHostAlloc(reinterpret_cast<void**>(&abort_), sizeof(int), cudaHostAllocMapped);
    *abort_ = 0;
    int* abortDev = nullptr;
    cudaHostGetDevicePointer(reinterpret_cast<void**>(&abortDev), abort_, 0);
    for (auto& l : links_) {
      void* slots = nullptr;
      void* words = nullptr;
      cudaMalloc(&slots, size_t{nslots} * slotBytes);
      cudaMalloc(&words, (nslots + 2) * sizeof(uint64_t));
      cudaMemset(words, 0, (nslots + 2) * sizeof(uint64_t));
      auto* w = static_cast<uint64_t*>(words);
      l = weft::dev::Channel{static_cast<unsigned char*>(slots),
                             w,
                             w + nslots,
                             w + nslots + 1,
                             nslots,
                             slotBytes,
                             abortDev};
      allocations_.push_back(slots);
      allocations_.push_back(words);
    }
    cudaMalloc(reinterpret_cast<void**>(&deviceLinks_), links_.size() * sizeof(links_[0]));
    cudaMemcpy(deviceLinks_, links_.data(), links_.size() * sizeof(links_[0]),
               cudaMemcpyHostToDevice);
  }
  ~LocalRing() {
    for (void* p : allocations_) cudaFree(p);
    cudaFree(deviceLinks_);
    cudaFreeHost(abort_);
  }
  const weft::dev::Channel* deviceLinks() const { return deviceLinks_; }
  void raiseAbort() { __atomic_store_n(abort_, 1, __ATOMIC_RELAXED); }

 private:
  std::vector<weft::dev::Channel> links_;
  std::vector<void*> allocations_;
  weft::dev::Channel* deviceLinks_ = nullptr;
  int* abort_ = nullptr;
};

}  // namespace gpu_test
