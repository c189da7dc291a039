// The AVX-512 variant of the host reduction kernels: the shared kernels of
// reduce_kernels.h over 64-byte vectors. src/CMakeLists.txt builds this file
// alone with -mavx512f -mavx512bw -mavx512vl -mf16c; reduce_dispatch.cc calls
// it only on CPUs with all four. As in reduce_avx2.cc, nothing here may be an inline
// function shared with other files.
//
// tests/reduce also builds this file with only -mavx2 -mf16c and
// WEFT_REDUCE_AVX512_EMULATED defined: GCC then splits each 64-byte vector in
// two, which checks the 64-byte source on CPUs without AVX-512.
#include "collectives/reduce_isa.h"

#if defined(__x86_64__)
#if !defined(__F16C__) || (!defined(__AVX512BW__) && !defined(WEFT_REDUCE_AVX512_EMULATED))
#error "reduce_avx512.cc must be compiled with -mavx512f -mavx512bw -mavx512vl -mf16c"
#endif

#include <cstddef>

namespace weft {
namespace {
constexpr size_t kVectorBytes = 64;
}  // namespace
}  // namespace weft

#include "collectives/reduce_kernels.h"
#include "collectives/reduce_vector_lanes.h"

namespace weft {

#ifdef WEFT_REDUCE_AVX512_EMULATED
const ReduceKernels* reduceKernelsAvx512Emulated();
const ReduceKernels* reduceKernelsAvx512Emulated() {
#else
const ReduceKernels* reduceKernelsAvx512() {
#endif
  static constexpr ReduceKernels kKernels = buildReduceKernels<VectorLanes>();
  return &kKernels;
}

}  // namespace weft

#else  // not x86-64: this build has no AVX-512 variant

namespace weft {
const ReduceKernels* reduceKernelsAvx512() { return nullptr; }
}  // namespace weft

#endif
