// Instruction-set variants of the host reduction kernels (reduce.h) and the
// run-time choice between them. Each variant is a table of kernels built in
// its own translation unit, compiled for its ISA: reduce_scalar.cc (portable),
// reduce_avx2.cc, reduce_avx512.cc. Every variant computes each output element
// with the same per-element operation, so they agree bit for bit.
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

enum class ReduceIsa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };
constexpr int kNumReduceIsas = 3;

// dst[i] = a[i] op b[i]; dst may be a or b exactly.
using CombineKernel = void (*)(void* dst, const void* a, const void* b, size_t count);
// buf[i] = buf[i] / nranks (the end of weftAvg).
using DivideKernel = void (*)(void* buf, size_t count, int nranks);

struct ReduceKernels {
  // The weftAvg entry is the sum; the bitwise ops are null for the float types.
  CombineKernel combine[weftNumTypes][weftNumOps];
  DivideKernel divide[weftNumTypes];
};

// The variants' tables; nullptr for a variant this build does not contain
// (the x86 ones on other architectures). Calling an x86 table's kernels on a
// CPU without that ISA faults: go through the functions below instead.
const ReduceKernels* reduceKernelsScalar();
const ReduceKernels* reduceKernelsAvx2();
const ReduceKernels* reduceKernelsAvx512();

// "scalar", "avx2", "avx512".
const char* reduceIsaName(ReduceIsa isa);
// True when this build contains the variant and this CPU (and OS) can run it.
bool reduceIsaSupported(ReduceIsa isa);
// The variant reduceElements uses, chosen once per process: WEFT_REDUCE_ISA
// when it names a supported variant, else the widest supported one.
ReduceIsa reduceIsaActive();
// The table of reduceIsaActive().
const ReduceKernels& reduceKernelsActive();

// True for a datatype and op inside weft's enums (the tables' bounds) that
// the tables combine (no bitwise op on a float type).
bool reduceArgsKnown(weftDataType_t dt, weftRedOp_t op);

// reduceElements / finishAverage through one named variant (tests, benchmarks).
// The variant must be supported; unknown datatypes or ops do nothing.
void reduceElementsWith(ReduceIsa isa, weftDataType_t dt, weftRedOp_t op, void* dst, const void* a,
                        const void* b, size_t count);
void finishAverageWith(ReduceIsa isa, weftDataType_t dt, void* buf, size_t count, int nranks);

}  // namespace weft
