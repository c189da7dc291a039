// The AVX2 variant of the host reduction kernels: the shared kernels of
// reduce_kernels.h over 32-byte vectors. src/CMakeLists.txt builds this file
// alone with -mavx2 -mf16c; reduce_dispatch.cc calls it only on CPUs with both.
// Nothing here may be an inline function shared with other files (see
// reduce_float16.h): the linker could hand AVX2 code to baseline callers.
#include "collectives/reduce_isa.h"

#if defined(__x86_64__)
#if !defined(__AVX2__) || !defined(__F16C__)
#error "reduce_avx2.cc must be compiled with -mavx2 -mf16c"
#endif

#include <cstddef>

namespace weft {
namespace {
constexpr size_t kVectorBytes = 32;
}  // namespace
}  // namespace weft

#include "collectives/reduce_kernels.h"
#include "collectives/reduce_vector_lanes.h"

namespace weft {

const ReduceKernels* reduceKernelsAvx2() {
  static constexpr ReduceKernels kKernels = buildReduceKernels<VectorLanes>();
  return &kKernels;
}

}  // namespace weft

#else  // not x86-64: this build has no AVX2 variant

namespace weft {
const ReduceKernels* reduceKernelsAvx2() { return nullptr; }
}  // namespace weft

#endif
