// Element-wise reductions on host memory for every datatype and op weft
// supports. Each output element is f(a[i], b[i]) alone (nothing is
// reassociated across elements), and the kernels come in ISA variants
// (scalar, AVX2, AVX-512; reduce_isa.h) that give identical bits, so ranks on
// different machines agree and results repeat run to run for an algorithm:
//   - integers: sum and prod wrap (two's complement); max/min as usual;
//   - float32/float64: IEEE sum, prod; max(a, b) = a < b ? b : a and
//     min(a, b) = b < a ? b : a (equal operands such as -0/+0 keep a); a NaN
//     in either operand gives NaN; every NaN result is the canonical quiet NaN;
//   - float16 (IEEE binary16) and bfloat16: widened to float32, combined in
//     float32, rounded to nearest even (overflow to Inf, subnormals kept,
//     NaN canonical: 0x7E00 / 0x7FC0).
#pragma once

#include <cstddef>

#include "base/datatype.h"
#include "weft/weft.h"

namespace weft {

// dst[i] = a[i] op b[i] for i < count. dst may be the same pointer as a or b;
// no pointer needs any alignment. For weftAvg this is a sum; finishAverage
// divides at the end. Unknown datatypes or ops do nothing.
void reduceElements(weftDataType_t dt, weftRedOp_t op, void* dst, const void* a, const void* b,
                    size_t count);
// buf[i] /= nranks: integers truncate toward zero (as NCCL's ncclAvg does),
// floats divide in their own precision, float16/bfloat16 in float32 and round.
void finishAverage(weftDataType_t dt, void* buf, size_t count, int nranks);

// dst[i] = src[i] * scalar, `scalar` one element of dt, with weftProd's
// arithmetic (wrapping integers, float16/bfloat16 through float32). dst may
// be src. The multiply of weftRedOpCreatePreMulSum's ops.
void scaleElements(weftDataType_t dt, void* dst, const void* src, size_t count, const void* scalar);

// out = in(0) op in(1) op ... op in(n-1), combined left to right: the one order
// every rank uses, so that all compute bitwise the same result. n >= 2; `out`
// may be in(0) or in(1) (elementwise aliasing), but no later input.
template <typename InputFn>
inline void reduceInRankOrder(weftDataType_t dt, weftRedOp_t op, void* out, int n, size_t count,
                              InputFn in) {
  reduceElements(dt, op, out, in(0), in(1), count);
  for (int p = 2; p < n; ++p) reduceElements(dt, op, out, out, in(p), count);
}

}  // namespace weft
