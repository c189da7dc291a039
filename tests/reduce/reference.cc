// The independent reference of reference.h.
#include "reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace reduce_ref {
namespace {

// A binary floating-point format with `fraction` stored mantissa bits and the
// given exponent bias (binary16: 10, 15; bfloat16: 7, 127).
struct Format {
  int fraction;
  int bias;
  uint16_t quietNan;
};
constexpr Format kHalf = {10, 15, 0x7E00};
constexpr Format kBf16 = {7, 127, 0x7FC0};

float decode(const Format& f, uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponentBits = 15 - f.fraction;
  const int maxExponent = (1 << exponentBits) - 1;
  const int exponent = (bits >> f.fraction) & maxExponent;
  const int mantissa = bits & ((1 << f.fraction) - 1);
  double value;
  if (exponent == maxExponent) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.fraction);
  } else {
    value = std::ldexp(static_cast<double>(mantissa + (1 << f.fraction)),
                       exponent - f.bias - f.fraction);
  }
  return static_cast<float>(negative ? -value : value);
}

uint16_t encode(const Format& f, float input) {
  if (std::isnan(input)) return f.quietNan;
  const uint16_t sign = std::signbit(input) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(input));
  const int maxExponent = (1 << (15 - f.fraction)) - 1;
  const uint16_t infinity = static_cast<uint16_t>(maxExponent << f.fraction);
  if (std::isinf(magnitude)) return sign | infinity;
  if (magnitude == 0) return sign;
  int e = 0;
  std::frexp(magnitude, &e);  // magnitude in [2^(e-1), 2^e)
  int exponent = e - 1;
  const int minExponent = 1 - f.bias;
  if (exponent < minExponent) exponent = minExponent;  // subnormal spacing
  const double step = std::ldexp(1.0, exponent - f.fraction);
  double units = std::nearbyint(magnitude / step);  // default mode: to nearest, ties to even
  if (units == std::ldexp(1.0, f.fraction + 1)) {   // rounded up into the next binade
    units /= 2;
    ++exponent;
  }
  if (exponent > f.bias) return sign | infinity;
  const int mantissaUnits = static_cast<int>(units);
  if (mantissaUnits < (1 << f.fraction)) return sign | static_cast<uint16_t>(mantissaUnits);
  const int storedExponent = exponent + f.bias;
  return sign | static_cast<uint16_t>((storedExponent << f.fraction) |
                                      (mantissaUnits - (1 << f.fraction)));
}

template <typename T>
T load(const uint8_t* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Integer ops: sum and prod in unsigned 128 bits, then keep the low bits.
template <typename T>
T integerOp(weftRedOp_t op, T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  const unsigned __int128 x = static_cast<U>(a);
  const unsigned __int128 y = static_cast<U>(b);
  switch (op) {
    case weftProd:
      return static_cast<T>(static_cast<U>(x * y));
    case weftMax:
      return a > b ? a : (b > a ? b : a);
    case weftMin:
      return a < b ? a : (b < a ? b : a);
    case weftBand:
      return static_cast<T>(static_cast<U>(a) & static_cast<U>(b));
    case weftBor:
      return static_cast<T>(static_cast<U>(a) | static_cast<U>(b));
    case weftBxor:
      return static_cast<T>(static_cast<U>(a) ^ static_cast<U>(b));
    default:
      return static_cast<T>(static_cast<U>(x + y));
  }
}

// Float ops as weft defines them: IEEE, NaN if either operand of max/min is
// NaN, and on equal operands (-0 vs +0) max/min keep the first.
template <typename T>
T floatOp(weftRedOp_t op, T a, T b) {
  if (op == weftMax || op == weftMin) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    if (op == weftMax) return b > a ? b : a;
    return b < a ? b : a;
  }
  return op == weftProd ? a * b : a + b;
}

template <typename T>
T canonical(T v) {
  return std::isnan(v) ? std::numeric_limits<T>::quiet_NaN() : v;
}

template <typename T>
void combineIntegers(weftRedOp_t op, const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) store<T>(out, i, integerOp<T>(op, load<T>(a, i), load<T>(b, i)));
}

template <typename T>
void combineFloats(weftRedOp_t op, const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    store<T>(out, i, canonical(floatOp<T>(op, load<T>(a, i), load<T>(b, i))));
}

void combineHalves(const Format& f, weftRedOp_t op, const uint8_t* a, const uint8_t* b,
                   uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = decode(f, load<uint16_t>(a, i));
    const float y = decode(f, load<uint16_t>(b, i));
    store<uint16_t>(out, i, encode(f, floatOp<float>(op, x, y)));
  }
}

template <typename T>
void divideIntegers(uint8_t* buf, size_t n, int nranks) {
  for (size_t i = 0; i < n; ++i) {
    const T v = load<T>(buf, i);
    // Truncating division by a positive count: T's own arithmetic suffices in
    // 64 bits for every T.
    if (std::is_signed<T>::value) {
      store<T>(buf, i, static_cast<T>(static_cast<long long>(v) / nranks));
    } else {
      store<T>(buf, i,
               static_cast<T>(static_cast<unsigned long long>(v) /
                              static_cast<unsigned long long>(nranks)));
    }
  }
}

template <typename T>
void divideFloats(uint8_t* buf, size_t n, int nranks) {
  for (size_t i = 0; i < n; ++i)
    store<T>(buf, i, canonical(load<T>(buf, i) / static_cast<T>(nranks)));
}

void divideHalves(const Format& f, uint8_t* buf, size_t n, int nranks) {
  for (size_t i = 0; i < n; ++i) {
    const float x = decode(f, load<uint16_t>(buf, i));
    store<uint16_t>(buf, i, encode(f, x / static_cast<float>(nranks)));
  }
}

}  // namespace

float decodeHalf(uint16_t bits) { return decode(kHalf, bits); }
float decodeBf16(uint16_t bits) { return decode(kBf16, bits); }
uint16_t encodeHalf(float value) { return encode(kHalf, value); }
uint16_t encodeBf16(float value) { return encode(kBf16, value); }

void combine(weftDataType_t dt, weftRedOp_t op, const uint8_t* a, const uint8_t* b, uint8_t* out,
             size_t n) {
  switch (dt) {
    case weftInt8:
      return combineIntegers<int8_t>(op, a, b, out, n);
    case weftUint8:
      return combineIntegers<uint8_t>(op, a, b, out, n);
    case weftInt32:
      return combineIntegers<int32_t>(op, a, b, out, n);
    case weftUint32:
      return combineIntegers<uint32_t>(op, a, b, out, n);
    case weftInt64:
      return combineIntegers<int64_t>(op, a, b, out, n);
    case weftUint64:
      return combineIntegers<uint64_t>(op, a, b, out, n);
    case weftFloat32:
      return combineFloats<float>(op, a, b, out, n);
    case weftFloat64:
      return combineFloats<double>(op, a, b, out, n);
    case weftFloat16:
      return combineHalves(kHalf, op, a, b, out, n);
    case weftBfloat16:
      return combineHalves(kBf16, op, a, b, out, n);
    default:
      return;
  }
}

void divide(weftDataType_t dt, uint8_t* buf, size_t n, int nranks) {
  switch (dt) {
    case weftInt8:
      return divideIntegers<int8_t>(buf, n, nranks);
    case weftUint8:
      return divideIntegers<uint8_t>(buf, n, nranks);
    case weftInt32:
      return divideIntegers<int32_t>(buf, n, nranks);
    case weftUint32:
      return divideIntegers<uint32_t>(buf, n, nranks);
    case weftInt64:
      return divideIntegers<int64_t>(buf, n, nranks);
    case weftUint64:
      return divideIntegers<uint64_t>(buf, n, nranks);
    case weftFloat32:
      return divideFloats<float>(buf, n, nranks);
    case weftFloat64:
      return divideFloats<double>(buf, n, nranks);
    case weftFloat16:
      return divideHalves(kHalf, buf, n, nranks);
    case weftBfloat16:
      return divideHalves(kBf16, buf, n, nranks);
    default:
      return;
  }
}

bool applies(weftDataType_t dt, weftRedOp_t op) {
  const bool bitwise = op == weftBand || op == weftBor || op == weftBxor;
  const bool floating =
      dt == weftFloat16 || dt == weftFloat32 || dt == weftFloat64 || dt == weftBfloat16;
  return !(bitwise && floating);
}

}  // namespace reduce_ref
