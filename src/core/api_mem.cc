// weftHostAlloc / weftHostFree: argument checks around core/host_memory.h.
#include "core/error.h"
#include "core/host_memory.h"

using weft::clearError;
using weft::setError;

extern "C" weftResult_t weftHostAlloc(void** ptr, size_t size) {
  clearError();
  if (ptr == nullptr) return setError(weftInvalidArgument, "weftHostAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return weftSuccess;  // as malloc(0) may: NULL, which weftHostFree accepts
  return weft::hostAlloc(size, ptr);
}

extern "C" weftResult_t weftHostFree(void* ptr) {
  clearError();
  if (ptr == nullptr) return weftSuccess;
  return weft::hostFree(ptr);
}
