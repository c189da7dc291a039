// Test inputs of inputs.h. Only the raw output of std::mt19937_64 is used
// (never a distribution), so the data are the same with every standard library.
#include "inputs.h"

#include <cmath>
#include <cstring>
#include <random>

namespace reduce_test {
namespace {

template <typename T>
void put(std::vector<uint8_t>* v, size_t i, T x) {
  std::memcpy(v->data() + i * sizeof(T), &x, sizeof(T));
}

float specialFloat(uint64_t r) {
  const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                               0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x00000001u,
                               0x807FFFFFu, 0x7F7FFFFFu, 0x3F800000u, 0xBF800000u};
  float f;
  std::memcpy(&f, &specials[r % (sizeof(specials) / sizeof(specials[0]))], sizeof(f));
  return f;
}

double specialDouble(uint64_t r) {
  const uint64_t specials[] = {0x0ull,
                               0x8000000000000000ull,
                               0x7FF0000000000000ull,
                               0xFFF0000000000000ull,
                               0x7FF8000000000000ull,
                               0xFFF8000000000123ull,
                               0x7FF0000000000001ull,
                               0x0000000000000001ull,
                               0x7FEFFFFFFFFFFFFFull,
                               0x3FF0000000000000ull};
  double d;
  std::memcpy(&d, &specials[r % (sizeof(specials) / sizeof(specials[0]))], sizeof(d));
  return d;
}

// Ordinary values: a signed random mantissa times a modest power of two.
template <typename T>
T ordinary(uint64_t r) {
  const double mantissa = static_cast<double>(static_cast<int64_t>(r >> 11) % 1000003) / 1000.0;
  return static_cast<T>(std::ldexp(mantissa, static_cast<int>((r >> 3) % 16) - 8));
}

template <typename T>
void floatPair(std::mt19937_64& rng, std::vector<uint8_t>* a, std::vector<uint8_t>* b, size_t i,
               T (*special)(uint64_t)) {
  const uint64_t kind = rng() % 8;
  const uint64_t r1 = rng();
  const uint64_t r2 = rng();
  T x = ordinary<T>(r1);
  T y = ordinary<T>(r2);
  if (kind == 0) std::memcpy(&x, &r1, sizeof(T));  // any bit pattern
  if (kind == 1) std::memcpy(&y, &r2, sizeof(T));
  if (kind == 2) x = special(r1);
  if (kind == 3) y = special(r2);
  if (kind == 4) y = (r2 & 1) ? x : -x;  // equal operands, +0 / -0 ties
  put<T>(a, i, x);
  put<T>(b, i, y);
}

// 16-bit floats with `fraction` mantissa bits: random patterns, specials, and
// pairs whose exponents differ by fraction + 1, where sums land on ties.
void halfPair(std::mt19937_64& rng, int fraction, std::vector<uint8_t>* a, std::vector<uint8_t>* b,
              size_t i) {
  const uint64_t kind = rng() % 4;
  uint16_t x = static_cast<uint16_t>(rng());
  uint16_t y = static_cast<uint16_t>(rng());
  const int expBits = 15 - fraction;
  const uint16_t expMask = static_cast<uint16_t>(((1 << expBits) - 1) << fraction);
  if (kind == 1) {
    // y is half an ulp of x (a tie) or a little more, with either sign.
    const int ex = (x & expMask) >> fraction;
    const int ey = ex - (fraction + 1);
    if (ey > 0 && ex < (1 << expBits) - 1) {
      const uint64_t r = rng();
      const int mantissa = (r & 1) ? 0 : static_cast<int>((r >> 1) & ((1u << fraction) - 1));
      y = static_cast<uint16_t>((r & 0x8000) | (ey << fraction) | mantissa);
    }
  } else if (kind == 2) {
    y = (rng() & 1) ? x : static_cast<uint16_t>(x ^ 0x8000);
  }
  put<uint16_t>(a, i, x);
  put<uint16_t>(b, i, y);
}

}  // namespace

size_t elementSize(weftDataType_t dt) {
  switch (dt) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    default:
      return 8;
  }
}

void makeInputs(weftDataType_t dt, size_t count, uint64_t seed, std::vector<uint8_t>* a,
                std::vector<uint8_t>* b) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(dt));
  const size_t size = elementSize(dt);
  a->assign(count * size, 0);
  b->assign(count * size, 0);
  for (size_t i = 0; i < count; ++i) {
    switch (dt) {
      case weftFloat32:
        floatPair<float>(rng, a, b, i, specialFloat);
        break;
      case weftFloat64:
        floatPair<double>(rng, a, b, i, specialDouble);
        break;
      case weftFloat16:
        halfPair(rng, 10, a, b, i);
        break;
      case weftBfloat16:
        halfPair(rng, 7, a, b, i);
        break;
      default: {
        const uint64_t x = rng();
        const uint64_t y = (rng() % 8 == 0) ? x : rng();  // some equal pairs
        std::memcpy(a->data() + i * size, &x, size);
        std::memcpy(b->data() + i * size, &y, size);
      }
    }
  }
}

}  // namespace reduce_test
