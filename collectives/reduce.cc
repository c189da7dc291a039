// Host reduction kernels (see reduce.h).
#include "collectives/reduce.h"

#include <algorithm>
#include <cstdint>

namespace weft {
namespace {

template <typename T, typename Fn>
void combine(void* dst, const void* a, const void* b, size_t n, Fn fn) {
  // Pointers are not __restrict: dst may alias a or b exactly, which the
  // compiler's runtime overlap check handles while still vectorising.
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) d[i] = fn(x[i], y[i]);
}

template <typename T>
void reduceTyped(weftRedOp_t op, void* dst, const void* a, const void* b, size_t n) {
  switch (op) {
    case weftSum:
    case weftAvg: combine<T>(dst, a, b, n, [](T u, T v) { return static_cast<T>(u + v); }); break;
    case weftProd: combine<T>(dst, a, b, n, [](T u, T v) { return static_cast<T>(u * v); }); break;
    case weftMax: combine<T>(dst, a, b, n, [](T u, T v) { return std::max(u, v); }); break;
    case weftMin: combine<T>(dst, a, b, n, [](T u, T v) { return std::min(u, v); }); break;
    default: break;
  }
}

template <typename T>
void divideTyped(void* buf, size_t n, int nranks) {
  T* p = static_cast<T*>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(nranks));
}

}  // namespace

size_t datatypeSize(weftDataType_t dt) {
  switch (dt) {
    case weftInt8: case weftUint8: return 1;
    case weftFloat16: case weftBfloat16: return 2;
    case weftInt32: case weftUint32: case weftFloat32: return 4;
    case weftInt64: case weftUint64: case weftFloat64: return 8;
    default: return 0;
  }
}

const char* datatypeName(weftDataType_t dt) {
  switch (dt) {
    case weftInt8: return "int8";
    case weftUint8: return "uint8";
    case weftInt32: return "int32";
    case weftUint32: return "uint32";
    case weftInt64: return "int64";
    case weftUint64: return "uint64";
    case weftFloat16: return "half";
    case weftFloat32: return "float";
    case weftFloat64: return "double";
    case weftBfloat16: return "bfloat16";
    default: return "unknown";
  }
}

const char* redOpName(weftRedOp_t op) {
  switch (op) {
    case weftSum: return "sum";
    case weftProd: return "prod";
    case weftMax: return "max";
    case weftMin: return "min";
    case weftAvg: return "avg";
    default: return "unknown";
  }
}

bool datatypeReducible(weftDataType_t dt) {
  return datatypeSize(dt) != 0 && dt != weftFloat16 && dt != weftBfloat16;
}

void reduceElements(weftDataType_t dt, weftRedOp_t op, void* dst, const void* a, const void* b,
                    size_t count) {
  switch (dt) {
    case weftInt8: reduceTyped<int8_t>(op, dst, a, b, count); break;
    case weftUint8: reduceTyped<uint8_t>(op, dst, a, b, count); break;
    case weftInt32: reduceTyped<int32_t>(op, dst, a, b, count); break;
    case weftUint32: reduceTyped<uint32_t>(op, dst, a, b, count); break;
    case weftInt64: reduceTyped<int64_t>(op, dst, a, b, count); break;
    case weftUint64: reduceTyped<uint64_t>(op, dst, a, b, count); break;
    case weftFloat32: reduceTyped<float>(op, dst, a, b, count); break;
    case weftFloat64: reduceTyped<double>(op, dst, a, b, count); break;
    default: break;
  }
}

void finishAverage(weftDataType_t dt, void* buf, size_t count, int nranks) {
  switch (dt) {
    case weftInt8: divideTyped<int8_t>(buf, count, nranks); break;
    case weftUint8: divideTyped<uint8_t>(buf, count, nranks); break;
    case weftInt32: divideTyped<int32_t>(buf, count, nranks); break;
    case weftUint32: divideTyped<uint32_t>(buf, count, nranks); break;
    case weftInt64: divideTyped<int64_t>(buf, count, nranks); break;
    case weftUint64: divideTyped<uint64_t>(buf, count, nranks); break;
    case weftFloat32: divideTyped<float>(buf, count, nranks); break;
    case weftFloat64: divideTyped<double>(buf, count, nranks); break;
    default: break;
  }
}

}  // namespace weft
