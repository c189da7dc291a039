// The variant list of variants.h.
#include "variants.h"

namespace weft {
// Defined by avx512_emulated.cc (x86-64 builds only).
const ReduceKernels* reduceKernelsAvx512Emulated();
}  // namespace weft

namespace reduce_test {

const std::vector<Variant>& allVariants() {
  static const std::vector<Variant> variants = [] {
    using weft::ReduceIsa;
    std::vector<Variant> list = {
        {"scalar", weft::reduceKernelsScalar(), weft::reduceIsaSupported(ReduceIsa::kScalar)},
        {"avx2", weft::reduceKernelsAvx2(), weft::reduceIsaSupported(ReduceIsa::kAvx2)},
        {"avx512", weft::reduceKernelsAvx512(), weft::reduceIsaSupported(ReduceIsa::kAvx512)},
    };
#if defined(__x86_64__)
    list.push_back({"avx512_on_avx2", weft::reduceKernelsAvx512Emulated(),
                    weft::reduceIsaSupported(ReduceIsa::kAvx2)});
#endif
    return list;
  }();
  return variants;
}

}  // namespace reduce_test
