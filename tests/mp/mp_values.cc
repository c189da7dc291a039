// Element values of mp_coll_full (see mp_values.h): exact integer inputs and
// references converted to each datatype, byte patterns, comparisons.
#include "mp_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collectives/reduce.h"
#include "mp_inputs.h"

namespace mp {
namespace {

bool isUnsigned(weftDataType_t dt) {
  return dt == weftUint8 || dt == weftUint32 || dt == weftUint64;
}

template <typename T>
void put(void* dst, size_t k, T v) {
  std::memcpy(static_cast<char*>(dst) + k * sizeof(T), &v, sizeof(T));
}

template <typename T>
T get(const void* src, size_t k) {
  T v;
  std::memcpy(&v, static_cast<const char*>(src) + k * sizeof(T), sizeof(T));
  return v;
}

// The sum v as an integer datatype holds it: sums wrap in the element type
// (two's complement), as they do in weft and NCCL. Integer avg divides that
// wrapped sum, so it differs from v / nranks once the sum overflows the type
// (uint8 inputs here past 6 ranks). 64-bit types keep v.
[[gnu::noinline]] int64_t wrapToType(weftDataType_t dt, int64_t v) {
  switch (dt) {
    case weftInt8:
      return static_cast<int8_t>(v);
    case weftUint8:
      return static_cast<uint8_t>(v);
    case weftInt32:
      return static_cast<int32_t>(v);
    case weftUint32:
      return static_cast<uint32_t>(v);
    default:
      return v;
  }
}

// Writes the exact integer v (or, for avg, v / nranks) as element k of dst.
[[gnu::noinline]] void putValue(weftDataType_t dt, void* dst, size_t k, int64_t v, int divisor) {
  const double q = static_cast<double>(v) / divisor;
  const float qf = static_cast<float>(v) / static_cast<float>(divisor);
  // Truncates toward zero, as integer avg does.
  const int64_t qi = divisor == 1 ? v : wrapToType(dt, v) / divisor;
  switch (dt) {
    case weftInt8:
      put<int8_t>(dst, k, static_cast<int8_t>(qi));
      break;
    case weftUint8:
      put<uint8_t>(dst, k, static_cast<uint8_t>(qi));
      break;
    case weftInt32:
      put<int32_t>(dst, k, static_cast<int32_t>(qi));
      break;
    case weftUint32:
      put<uint32_t>(dst, k, static_cast<uint32_t>(qi));
      break;
    case weftInt64:
      put<int64_t>(dst, k, qi);
      break;
    case weftUint64:
      put<uint64_t>(dst, k, static_cast<uint64_t>(qi));
      break;
    case weftFloat16:
      put<uint16_t>(dst, k, floatToHalfBits(qf));
      break;
    case weftBfloat16:
      put<uint16_t>(dst, k, floatToBf16Bits(qf));
      break;
    case weftFloat32:
      put<float>(dst, k, qf);
      break;
    case weftFloat64:
      put<double>(dst, k, q);
      break;
    default:
      break;
  }
}

// Element k of p as a double (every value written here is exact in it).
double elemValue(weftDataType_t dt, const void* p, size_t k) {
  switch (dt) {
    case weftInt8:
      return get<int8_t>(p, k);
    case weftUint8:
      return get<uint8_t>(p, k);
    case weftInt32:
      return get<int32_t>(p, k);
    case weftUint32:
      return get<uint32_t>(p, k);
    case weftInt64:
      return static_cast<double>(get<int64_t>(p, k));
    case weftUint64:
      return static_cast<double>(get<uint64_t>(p, k));
    case weftFloat32:
      return get<float>(p, k);
    case weftFloat64:
      return get<double>(p, k);
    case weftFloat16:
      return halfBitsToFloat(get<uint16_t>(p, k));
    case weftBfloat16: {
      const uint32_t x = static_cast<uint32_t>(get<uint16_t>(p, k)) << 16;
      float f;
      std::memcpy(&f, &x, sizeof(f));
      return f;
    }
    default:
      return NAN;
  }
}

// Stops the test when element k of dst does not read back as v: the inputs
// are small integers, exact in every type, so only a broken build gets here.
void checkWritten(weftDataType_t dt, const void* dst, size_t k, int64_t v) {
  const double got = elemValue(dt, dst, k);
  if (got == static_cast<double>(v)) return;
  std::fprintf(stderr,
               "mp::fillReduceInput: element %zu of a %s input reads back as %g, not %lld: this "
               "build of tests/mp/mp_values.cc writes wrong inputs (a compiler fault), so no "
               "result can be checked\n",
               k, dtName(dt), got, static_cast<long long>(v));
  std::abort();
}

std::string showElem(weftDataType_t dt, const void* p, size_t k) {
  char buf[96];
  switch (dt) {
    case weftInt8:
      return std::to_string(get<int8_t>(p, k));
    case weftUint8:
      return std::to_string(get<uint8_t>(p, k));
    case weftInt32:
      return std::to_string(get<int32_t>(p, k));
    case weftUint32:
      return std::to_string(get<uint32_t>(p, k));
    case weftInt64:
      return std::to_string(get<int64_t>(p, k));
    case weftUint64:
      return std::to_string(get<uint64_t>(p, k));
    case weftFloat32:
      std::snprintf(buf, sizeof(buf), "%.9g", get<float>(p, k));
      return buf;
    case weftFloat64:
      std::snprintf(buf, sizeof(buf), "%.17g", get<double>(p, k));
      return buf;
    case weftFloat16:
    case weftBfloat16: {
      uint16_t h = get<uint16_t>(p, k);
      uint32_t x = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &x, sizeof(f));
      if (dt == weftFloat16) f = halfBitsToFloat(h);
      std::snprintf(buf, sizeof(buf), "%.6g (0x%04x)", f, h);
      return buf;
    }
    default:
      return "?";
  }
}

// The inputs of reduceInputValue (and mp_inputs.h's reduceInput, which it uses)
// repeat along the index with this period, so
// fills compute one period and copy it (fast even for the large counts).
size_t periodOf(weftRedOp_t op) {
  switch (op) {
    case weftProd:
    case weftBand:
    case weftBor:
      return 7;
    case weftMax:
    case weftMin:
      return 201;
    case weftBxor:
      return 128;
    default:
      return 41;
  }
}

// Repeats the first `have` bytes of dst until `total` bytes are filled.
void tile(void* dst, size_t have, size_t total) {
  auto* p = static_cast<unsigned char*>(dst);
  while (have > 0 && have < total) {
    const size_t c = std::min(have, total - have);
    std::memcpy(p + have, p, c);
    have += c;
  }
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

size_t dtSize(weftDataType_t dt) { return weft::datatypeSize(dt); }
const char* dtName(weftDataType_t dt) { return weft::datatypeName(dt); }
bool dtReducible(weftDataType_t dt) { return weft::datatypeReducible(dt); }
bool opApplies(weftDataType_t dt, weftRedOp_t op) { return weft::redOpApplies(dt, op); }

uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal half, in units of 2^-24
    float a;
    std::memcpy(&a, &ax, sizeof(a));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
  const uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(sign | h);
}

float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) ? 1u : 0u, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float v;
  if (e == 0)
    v = std::ldexp(static_cast<float>(m), -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(m | 0x400u), static_cast<int>(e) - 25);
  return sign ? -v : v;
}

uint16_t floatToBf16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// Not inlined (nor is putValue): GCC 13.3 at -O3 (Ubuntu 24.04), inlining it
// into fillReduceInput's loop, dropped the int8 store there (the loop's jump
// table sent weftInt8 to the switch's "write nothing" arm; the test after
// isUnsigned seems to mislead its value ranges), so every int8 input stayed 0
// and every int8 reduction looked wrong on the GPU machine. -O2, GCC 12 and
// Clang were right; with both functions out of line GCC 13.3 is too.
// fillReduceInput reads each element back (checkWritten), so a build that
// still writes wrong inputs stops with that sentence instead.
[[gnu::noinline]] int64_t reduceInputValue(weftDataType_t dt, weftRedOp_t op, int r, size_t i) {
  if (!isUnsigned(dt)) return reduceInput<int64_t>(op, r, i);
  // Non-negative variants: sums and products of 5 ranks still fit uint8.
  const size_t ur = static_cast<size_t>(r);
  switch (op) {
    case weftProd: {
      static const int kFactors[] = {1, 1, 2, 1, 2, 1, 1};
      return kFactors[(i + 3 * ur) % 7];
    }
    case weftMax:
    case weftMin:
      return static_cast<int64_t>((i * 31 + ur * 17) % 201);
    case weftBand:
    case weftBor:
      return reduceInput<int64_t>(op, r, i);  // non-negative already
    case weftBxor:
      return static_cast<int64_t>((i * 7 + ur * 13) % 128);
    default:
      return static_cast<int64_t>((i * 7 + ur * 13) % 41);
  }
}

void fillReduceInput(weftDataType_t dt, weftRedOp_t op, int r, size_t first, size_t count,
                     void* dst) {
  const size_t direct = std::min(count, periodOf(op));
  for (size_t k = 0; k < direct; ++k) {
    const int64_t v = reduceInputValue(dt, op, r, first + k);
    putValue(dt, dst, k, v, 1);
    checkWritten(dt, dst, k, v);
  }
  tile(dst, direct * dtSize(dt), count * dtSize(dt));
}

void fillReduceExpected(weftDataType_t dt, weftRedOp_t op, int nranks, size_t first, size_t count,
                        void* dst) {
  const size_t direct = std::min(count, periodOf(op));
  for (size_t k = 0; k < direct; ++k) {
    int64_t acc = reduceInputValue(dt, op, 0, first + k);
    for (int r = 1; r < nranks; ++r) {
      const int64_t v = reduceInputValue(dt, op, r, first + k);
      if (op == weftProd)
        acc *= v;
      else if (op == weftMax)
        acc = v > acc ? v : acc;
      else if (op == weftMin)
        acc = v < acc ? v : acc;
      else if (op == weftBand)
        acc &= v;
      else if (op == weftBor)
        acc |= v;
      else if (op == weftBxor)
        acc ^= v;  // on sign-extended values: the low bits are T's xor
      else
        acc += v;
    }
    putValue(dt, dst, k, acc, op == weftAvg ? nranks : 1);
  }
  tile(dst, direct * dtSize(dt), count * dtSize(dt));
}

uint64_t seedOf(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

void fillPattern(void* dst, size_t bytes, uint64_t seed) {
  auto* p = static_cast<unsigned char*>(dst);
  size_t k = 0;
  for (; k + 8 <= bytes; k += 8) {
    const uint64_t w = mix(seed ^ (k * 0x9e3779b97f4a7c15ull));
    std::memcpy(p + k, &w, 8);
  }
  if (k == bytes) return;
  const uint64_t w = mix(seed ^ (k * 0x9e3779b97f4a7c15ull));
  std::memcpy(p + k, &w, bytes - k);
}

std::vector<unsigned char> pattern(size_t bytes, uint64_t seed) {
  std::vector<unsigned char> v(bytes + 1);  // never empty, so data() is never null
  fillPattern(v.data(), bytes, seed);
  return v;
}

std::string compareElems(weftDataType_t dt, const void* got, const void* want, size_t count) {
  const size_t es = dtSize(dt);
  if (count == 0 || std::memcmp(got, want, count * es) == 0) return "";
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* w = static_cast<const unsigned char*>(want);
  size_t bad = 0, first = 0;
  for (size_t k = 0; k < count; ++k) {
    if (std::memcmp(g + k * es, w + k * es, es) == 0) continue;
    if (bad++ == 0) first = k;
  }
  return std::to_string(bad) + " wrong element(s), first at index " + std::to_string(first) +
         ": got " + showElem(dt, got, first) + ", want " + showElem(dt, want, first);
}

}  // namespace mp
