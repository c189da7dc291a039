// The kernel variants the reduce tests run: every ISA variant built into weft,
// plus the AVX-512 source built for AVX2 (avx512_emulated.cc), which checks
// the 64-byte code paths on CPUs without AVX-512. A variant this CPU cannot
// run is listed but skipped.
#pragma once

#include <string>
#include <vector>

#include "collectives/reduce_isa.h"

namespace reduce_test {

struct Variant {
  std::string name;
  const weft::ReduceKernels* table;  // nullptr when this build lacks it
  bool runnable;                     // this CPU can run it
};

const std::vector<Variant>& allVariants();

}  // namespace reduce_test
