// The reduction kernels of one ISA variant: loops that apply the operations
// of reduce_ops.h a whole lane set at a time, and the table that names them
// (reduce_isa.h). An ISA translation unit defines its lane set and calls
// buildReduceKernels<Lanes>(). Internal linkage on purpose, as in
// reduce_float16.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "collectives/reduce_isa.h"
#include "collectives/reduce_ops.h"

namespace weft {
namespace {

// Copies n < kLimit bytes (kLimit a power of two up to 64) with fixed-size
// moves: a call into memcpy would cost more than a whole small reduction.
template <size_t kLimit>
inline void copySmall(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if constexpr (kLimit > 32) {
    if (n & 32) __builtin_memcpy(d, s, 32), d += 32, s += 32;
  }
  if constexpr (kLimit > 16) {
    if (n & 16) __builtin_memcpy(d, s, 16), d += 16, s += 16;
  }
  if constexpr (kLimit > 8) {
    if (n & 8) __builtin_memcpy(d, s, 8), d += 8, s += 8;
  }
  if constexpr (kLimit > 4) {
    if (n & 4) __builtin_memcpy(d, s, 4), d += 4, s += 4;
  }
  if constexpr (kLimit > 2) {
    if (n & 2) __builtin_memcpy(d, s, 2), d += 2, s += 2;
  }
  if constexpr (kLimit > 1) {
    if (n & 1) *d = *s;
  }
}

// One lane set of the combine: loads before the store, so dst may be a or b.
template <typename V, typename Op>
inline void combineAt(char* out, const char* x, const char* y) {
  V va, vb;
  __builtin_memcpy(&va, x, sizeof(V));
  __builtin_memcpy(&vb, y, sizeof(V));
  const V r = Op::apply(va, vb);
  __builtin_memcpy(out, &r, sizeof(V));
}

// dst[i] = Op(a[i], b[i]) over `count` elements of T, V = one lane set of T.
// dst may be a or b exactly; no pointer needs any alignment. The last,
// partial lane set runs the same Op on zero padding, so every element gets
// the identical operation.
template <typename T, typename V, typename Op>
void combineKernel(void* dst, const void* a, const void* b, size_t count) {
  static_assert(sizeof(V) % sizeof(T) == 0 && sizeof(V) <= 64 && (sizeof(V) & (sizeof(V) - 1)) == 0,
                "V: whole elements of T, a power of two up to 64 bytes");
  char* out = static_cast<char*>(dst);
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  const size_t bytes = count * sizeof(T);
  size_t at = 0;
  for (; at + 2 * sizeof(V) <= bytes; at += 2 * sizeof(V)) {  // two lane sets in flight
    combineAt<V, Op>(out + at, x + at, y + at);
    combineAt<V, Op>(out + at + sizeof(V), x + at + sizeof(V), y + at + sizeof(V));
  }
  if (at + sizeof(V) <= bytes) {
    combineAt<V, Op>(out + at, x + at, y + at);
    at += sizeof(V);
  }
  if (at < bytes) {
    V va{}, vb{};
    copySmall<sizeof(V)>(&va, x + at, bytes - at);
    copySmall<sizeof(V)>(&vb, y + at, bytes - at);
    const V r = Op::apply(va, vb);
    copySmall<sizeof(V)>(out + at, &r, bytes - at);
  }
}

// buf[i] = Op(buf[i], nranks), same loop shape as combineKernel.
template <typename T, typename V, typename Op>
void divideKernel(void* buf, size_t count, int nranks) {
  char* p = static_cast<char*>(buf);
  const size_t bytes = count * sizeof(T);
  size_t at = 0;
  for (; at + sizeof(V) <= bytes; at += sizeof(V)) {
    V x;
    __builtin_memcpy(&x, p + at, sizeof(V));
    const V r = Op::apply(x, nranks);
    __builtin_memcpy(p + at, &r, sizeof(V));
  }
  if (at < bytes) {
    V x{};
    copySmall<sizeof(V)>(&x, p + at, bytes - at);
    const V r = Op::apply(x, nranks);
    copySmall<sizeof(V)>(p + at, &r, bytes - at);
  }
}

// Integer average: truncating division, done in 64 bits so that nranks never
// has to fit in T (an int8 divided by 200 ranks is 0, not x / -56).
// User buffers need not be aligned to T: elements move through memcpy (one
// plain load/store once compiled; a misaligned T* access is undefined).
template <typename T>
void divideIntegers(void* buf, size_t count, int nranks) {
  using Wide = typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type;
  char* p = static_cast<char*>(buf);
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    v = static_cast<T>(static_cast<Wide>(v) / static_cast<Wide>(nranks));
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
  }
}

template <typename S, typename T, typename Unsigned>
constexpr void setIntegerKernels(ReduceKernels& k, weftDataType_t dt) {
  using V = typename VecOf<S, T>::type;
  using UV = typename VecOf<S, Unsigned>::type;
  k.combine[dt][weftSum] = &combineKernel<Unsigned, UV, AddOp>;
  k.combine[dt][weftProd] = &combineKernel<Unsigned, UV, MulOp>;
  k.combine[dt][weftMax] = &combineKernel<T, V, MaxOp>;
  k.combine[dt][weftMin] = &combineKernel<T, V, MinOp>;
  k.combine[dt][weftAvg] = k.combine[dt][weftSum];
  k.combine[dt][weftBand] = &combineKernel<Unsigned, UV, AndOp>;
  k.combine[dt][weftBor] = &combineKernel<Unsigned, UV, OrOp>;
  k.combine[dt][weftBxor] = &combineKernel<Unsigned, UV, XorOp>;
  k.divide[dt] = &divideIntegers<T>;
}

template <typename S, typename T>
constexpr void setFloatKernels(ReduceKernels& k, weftDataType_t dt) {
  using V = typename VecOf<S, T>::type;
  k.combine[dt][weftSum] = &combineKernel<T, V, FloatOp<S, T, AddOp>>;
  k.combine[dt][weftProd] = &combineKernel<T, V, FloatOp<S, T, MulOp>>;
  k.combine[dt][weftMax] = &combineKernel<T, V, FloatOp<S, T, FloatMaxOp>>;
  k.combine[dt][weftMin] = &combineKernel<T, V, FloatOp<S, T, FloatMinOp>>;
  k.combine[dt][weftAvg] = k.combine[dt][weftSum];
  k.divide[dt] = &divideKernel<T, V, FloatDivide<S, T>>;
}

template <typename S, typename Format>
constexpr void setHalfKernels(ReduceKernels& k, weftDataType_t dt) {
  using V = typename S::H16;
  k.combine[dt][weftSum] = &combineKernel<uint16_t, V, HalfOp<S, Format, AddOp>>;
  k.combine[dt][weftProd] = &combineKernel<uint16_t, V, HalfOp<S, Format, MulOp>>;
  k.combine[dt][weftMax] = &combineKernel<uint16_t, V, HalfOp<S, Format, FloatMaxOp>>;
  k.combine[dt][weftMin] = &combineKernel<uint16_t, V, HalfOp<S, Format, FloatMinOp>>;
  k.combine[dt][weftAvg] = k.combine[dt][weftSum];
  k.divide[dt] = &divideKernel<uint16_t, V, HalfDivide<S, Format>>;
}

// Every datatype x op of weft for the lane set S.
template <typename S>
constexpr ReduceKernels buildReduceKernels() {
  ReduceKernels k{};
  setIntegerKernels<S, int8_t, uint8_t>(k, weftInt8);
  setIntegerKernels<S, uint8_t, uint8_t>(k, weftUint8);
  setIntegerKernels<S, int32_t, uint32_t>(k, weftInt32);
  setIntegerKernels<S, uint32_t, uint32_t>(k, weftUint32);
  setIntegerKernels<S, int64_t, uint64_t>(k, weftInt64);
  setIntegerKernels<S, uint64_t, uint64_t>(k, weftUint64);
  setFloatKernels<S, float>(k, weftFloat32);
  setFloatKernels<S, double>(k, weftFloat64);
  setHalfKernels<S, Fp16Format>(k, weftFloat16);
  setHalfKernels<S, Bf16Format>(k, weftBfloat16);
  return k;
}

}  // namespace
}  // namespace weft
