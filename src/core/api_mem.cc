// weftHostAlloc / weftHostFree: argument checks around base/host_memory.h.
#include <cstdint>

#include "base/error.h"
#include "base/host_memory.h"

using weft::clearError;
using weft::setError;

extern "C" weftResult_t weftHostAlloc(void** ptr, size_t size) {
  clearError();
  if (ptr == nullptr) return setError(weftInvalidArgument, "weftHostAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return weftSuccess;  // as malloc(0) may: NULL, which weftHostFree accepts
  // 4 EiB: far above any machine's memory, and far enough below SIZE_MAX and
  // off_t's limit that rounding up to whole pages cannot wrap (SIZE_MAX once
  // became "cannot size 0 bytes").
  constexpr size_t kLargest = static_cast<size_t>(1) << 62;
  if (size > kLargest)
    return setError(weftInvalidArgument,
                    "weftHostAlloc: size=%zu is larger than any allocation (at most %zu)", size,
                    kLargest);
  return weft::hostAlloc(size, ptr);
}

extern "C" weftResult_t weftHostFree(void* ptr) {
  clearError();
  if (ptr == nullptr) return weftSuccess;
  return weft::hostFree(ptr);
}
