// Host stand-ins for the 16-bit float types (half, bfloat16) in the perf
// tools' check data: they hold the bits, are built from the small integers
// that check values are (rounded to nearest even, as the formats define), and
// compare by value. No arithmetic: the tools only fill and compare.
#ifndef WEFT_PERF_PERF_HALF_H
#define WEFT_PERF_PERF_HALF_H

#include <cstdint>

// Bits of the integer v in a binary format with `fraction` mantissa bits and
// exponent bias `bias`, rounded to nearest even (Inf when too large).
uint16_t PerfIntegerToFloatBits(int64_t v, int fraction, int bias);

template <int kFraction, int kBias>
struct PerfSmallFloat {
  uint16_t bits = 0;
  PerfSmallFloat() = default;
  explicit PerfSmallFloat(int64_t v) : bits(PerfIntegerToFloatBits(v, kFraction, kBias)) {}
  bool operator==(const PerfSmallFloat& other) const {
    const bool zeros = ((bits | other.bits) & 0x7FFF) == 0;  // +0 == -0
    return bits == other.bits || zeros;
  }
};

using PerfHalf = PerfSmallFloat<10, 15>;
using PerfBfloat16 = PerfSmallFloat<7, 127>;
static_assert(sizeof(PerfHalf) == 2 && sizeof(PerfBfloat16) == 2, "16-bit storage");

#endif  // WEFT_PERF_PERF_HALF_H
