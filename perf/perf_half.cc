// Integer to 16-bit float bits for the perf tools' check data (perf_half.h).
#include "perf_half.h"

uint16_t PerfIntegerToFloatBits(int64_t v, int fraction, int bias) {
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (magnitude == 0) return sign;
  int exponent = 63 - __builtin_clzll(magnitude);  // magnitude in [2^e, 2^(e+1))
  if (exponent > fraction) {                       // drop the low bits, rounding to nearest even
    const int shift = exponent - fraction;
    const uint64_t dropped = magnitude & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    magnitude >>= shift;
    if (dropped > half || (dropped == half && (magnitude & 1) != 0)) ++magnitude;
    if (magnitude >> (fraction + 1)) {  // rounded up into the next power of two
      magnitude >>= 1;
      ++exponent;
    }
  } else {
    magnitude <<= fraction - exponent;
  }
  const int max_exponent = (1 << (15 - fraction)) - 1;
  if (exponent + bias >= max_exponent)
    return sign | static_cast<uint16_t>(max_exponent << fraction);
  const uint64_t mantissa = magnitude & ((uint64_t{1} << fraction) - 1);
  return sign |
         static_cast<uint16_t>((static_cast<uint64_t>(exponent + bias) << fraction) | mantissa);
}
