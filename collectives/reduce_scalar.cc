// The portable variant of the host reduction kernels: the shared kernels of
// reduce_kernels.h over one element at a time. Built for the baseline ISA (the
// compiler may still vectorise it with what the baseline has); every build
// and every CPU has it.
#include <cstdint>

#include "collectives/reduce_isa.h"
#include "collectives/reduce_kernels.h"

namespace weft {
namespace {

struct ScalarLanes {
  using I8 = int8_t;
  using U8 = uint8_t;
  using I32 = int32_t;
  using U32 = uint32_t;
  using I64 = int64_t;
  using U64 = uint64_t;
  using F32 = float;
  using F64 = double;
  using H16 = uint16_t;

  static U32 widen(H16 h) { return h; }
  static H16 narrow(U32 u) { return static_cast<H16>(u); }
  static constexpr bool kOneLane = true;
  static constexpr bool kHardwareBinary16 = false;  // binary16 through Fp16Format
};

}  // namespace

const ReduceKernels* reduceKernelsScalar() {
  static constexpr ReduceKernels kKernels = buildReduceKernels<ScalarLanes>();
  return &kKernels;
}

}  // namespace weft
