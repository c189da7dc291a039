// Page-aligned, pre-touched host buffers for the perf tools (see perf_buffer.h).
#include "perf_buffer.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

PerfBuffer::~PerfBuffer() { std::free(data_); }

bool PerfBuffer::Allocate(size_t bytes) {
  std::free(data_);
  data_ = nullptr;
  bytes_ = 0;
  long page = sysconf(_SC_PAGESIZE);
  const size_t page_size = page > 0 ? static_cast<size_t>(page) : 4096;
  const size_t rounded = (bytes + page_size - 1) / page_size * page_size;
  void* memory = nullptr;
  if (posix_memalign(&memory, page_size, rounded == 0 ? page_size : rounded) != 0) return false;
  std::memset(memory, 0, rounded == 0 ? page_size : rounded);
  data_ = memory;
  bytes_ = bytes;
  return true;
}
