// Deterministic test inputs for the reduce tests, as raw bytes: full-range
// integers (so sums and products wrap), and floats of every class (normal,
// subnormal, zeros, infinities, NaNs with assorted payloads and signs), with
// pairs chosen to hit rounding ties in the 16-bit formats and equal operands
// (+0 vs -0) in max/min.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/weft.h"

namespace reduce_test {

size_t elementSize(weftDataType_t dt);
// Two inputs of `count` elements for dt; `seed` picks the stream.
void makeInputs(weftDataType_t dt, size_t count, uint64_t seed, std::vector<uint8_t>* a,
                std::vector<uint8_t>* b);

}  // namespace reduce_test
