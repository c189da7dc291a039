// Page-aligned, pre-touched host buffers for the perf tools (see perf_buffer.h).
#include "perf_buffer.h"

#include <unistd.h>
#include <weft/weft.h>

#include <cstdlib>
#include <cstring>

#include "perf_device.h"

PerfBuffer::~PerfBuffer() { Release(); }

void PerfBuffer::Release() {
  if (device_)
    PerfDeviceFree(data_);
  else if (shared_)
    weftHostFree(data_);
  else
    std::free(data_);
  data_ = nullptr;
  bytes_ = 0;
  shared_ = false;
  device_ = false;
}

bool PerfBuffer::Allocate(size_t bytes, bool shared, bool device) {
  Release();
  long page = sysconf(_SC_PAGESIZE);
  const size_t page_size = page > 0 ? static_cast<size_t>(page) : 4096;
  const size_t rounded = (bytes + page_size - 1) / page_size * page_size;
  const size_t size = rounded == 0 ? page_size : rounded;
  void* memory = nullptr;
  if (device) {
    data_ = PerfDeviceAlloc(size);
    bytes_ = bytes;
    device_ = data_ != nullptr;
    return device_;
  }
  if (shared) {
    if (weftHostAlloc(&memory, size) != weftSuccess) return false;
  } else if (posix_memalign(&memory, page_size, size) != 0) {
    return false;
  }
  std::memset(memory, 0, size);
  data_ = memory;
  bytes_ = bytes;
  shared_ = shared;
  return true;
}
