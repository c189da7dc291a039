// A page-aligned host buffer for the perf tools (or, with -D 1, CUDA device
// memory), allocated once for the largest size and touched once so that page
// faults stay out of the timed loops.
#ifndef WEFT_PERF_PERF_BUFFER_H
#define WEFT_PERF_PERF_BUFFER_H

#include <cstddef>

class PerfBuffer {
 public:
  PerfBuffer() = default;
  ~PerfBuffer();
  PerfBuffer(const PerfBuffer&) = delete;
  PerfBuffer& operator=(const PerfBuffer&) = delete;

  // Allocates `bytes` (at least one page) and writes every page; `shared`:
  // with weftHostAlloc (peers on the node map it); `device`: with cudaMalloc.
  // False when out of memory.
  bool Allocate(size_t bytes, bool shared, bool device);
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool shared_ = false;
  bool device_ = false;
  void Release();
};

#endif  // WEFT_PERF_PERF_BUFFER_H
