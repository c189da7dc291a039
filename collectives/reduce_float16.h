// Conversions between float32 and the 16-bit float formats (IEEE binary16 and
// bfloat16), written once for scalars and for GCC vectors alike: `S` is a lane
// set (reduce_scalar.cc, reduce_vector_lanes.h) whose U32 / I32 / F32 are
// scalars or vectors of the same lane count; with one lane (S::kOneLane) the
// common normal range takes a branch instead of computing every case.
// Widening is exact; narrowing rounds to nearest, ties to even, overflows to
// infinity, keeps subnormals, and turns every NaN into the format's canonical
// quiet NaN (0x7E00, 0x7FC0), so a NaN result has the same bits whichever
// operand carried it.
//
// Internal linkage on purpose: every ISA translation unit compiles its own
// copy with its own instruction set, and the linker must not merge them.
#pragma once

#include <cstdint>

namespace weft {
namespace {

// A scalar or vector with every lane equal to `value`.
template <typename V, typename E>
inline V splat(E value) {
  return V{} + value;
}

template <typename To, typename From>
inline To bitsAs(From from) {
  return __builtin_bit_cast(To, from);
}

struct Fp16Format {
  static constexpr bool kBinary16 = true;
  static constexpr uint16_t kQuietNan = 0x7E00;

  // `h` holds binary16 bits in its low 16 bits.
  template <typename S>
  static typename S::F32 toFloat(typename S::U32 h) {
    using U = typename S::U32;
    using F = typename S::F32;
    const U shifted = (h & 0x7FFFu) << 13;     // exponent and mantissa at float's positions
    const U exponent = shifted & 0x0F800000u;  // the binary16 exponent field, shifted
    U bits = shifted + 0x38000000u;            // rebias the exponent: 15 -> 127
    if constexpr (S::kOneLane) {               // one element: branch past the rare cases
      if (exponent - 0x00800000u < 0x0F800000u - 0x00800000u) {
        return bitsAs<F>(bits | ((h & 0x8000u) << 16));
      }
    }
    bits = exponent == 0x0F800000u ? bits + 0x38000000u : bits;  // Inf/NaN: exponent 255
    // Zero and subnormals: build 2^-14 * (1 + m/1024), then subtract 2^-14.
    // The subtraction is exact, so no rounding mode or FTZ can change it.
    const F value = bitsAs<F>(exponent == 0u ? bits + 0x00800000u : bits);
    const F renormalised = value - bitsAs<F>(splat<U>(0x38800000u));
    const U magnitude = exponent == 0u ? bitsAs<U>(renormalised) : bitsAs<U>(value);
    return bitsAs<F>(magnitude | ((h & 0x8000u) << 16));
  }

  // The binary16 bits of `f` in the low 16 bits of the result. Integer
  // arithmetic only, so the floating-point environment (rounding mode,
  // FTZ/DAZ) cannot change it, as it cannot change F16C's VCVTPS2PH with an
  // explicit round-to-nearest-even, which the vector variants use instead.
  template <typename S>
  static typename S::U32 fromFloat(typename S::F32 f) {
    using U = typename S::U32;
    using I = typename S::I32;
    const U bits = bitsAs<U>(f);
    const U magnitude = bits & 0x7FFFFFFFu;
    const I signedMagnitude = bitsAs<I>(magnitude);  // < 2^31: signed compares are cheaper
    // Normal results: rebias 127 -> 15 and round the 13 dropped bits to even.
    // (A carry out of the mantissa is the next binade, up to Inf at 65520.)
    const U normal = (magnitude - 0x38000000u + 0xFFFu + ((magnitude >> 13) & 1u)) >> 13;
    if constexpr (S::kOneLane) {  // one element: branch past the rare cases
      if (magnitude - 0x38800000u < 0x477FF000u - 0x38800000u)
        return normal | ((bits >> 16) & 0x8000u);
    }
    // Results below 2^-14: the value in units of 2^-24 is the float's 24-bit
    // significand shifted right by 126 - exponent (at least 14; beyond 25
    // everything rounds to zero), rounded to nearest even on the dropped bits.
    // (Lanes on the other paths get a clamped shift too: every shift stays valid.)
    const U significand = (magnitude & 0x007FFFFFu) | 0x00800000u;
    I shiftCount = 126 - bitsAs<I>(magnitude >> 23);
    shiftCount = shiftCount < 14 ? splat<I>(14) : shiftCount;
    shiftCount = shiftCount > 25 ? splat<I>(25) : shiftCount;
    const U shift = bitsAs<U>(shiftCount);
    const U units = significand >> shift;
    const U dropped = significand & ((splat<U>(1u) << shift) - 1u);
    const U halfway = splat<U>(1u) << (shift - 1u);
    const U subnormal = units + ((dropped > halfway) | ((dropped == halfway) & ((units & 1u) != 0u))
                                     ? splat<U>(1u)
                                     : splat<U>(0u));
    U result = signedMagnitude < 0x38800000 ? subnormal : normal;
    result = signedMagnitude >= 0x477FF000 ? splat<U>(0x7C00u) : result;  // >= 65520: Inf
    result |= (bits >> 16) & 0x8000u;
    return signedMagnitude > 0x7F800000 ? splat<U>(uint32_t{kQuietNan}) : result;
  }
};

struct Bf16Format {
  static constexpr bool kBinary16 = false;
  static constexpr uint16_t kQuietNan = 0x7FC0;

  template <typename S>
  static typename S::F32 toFloat(typename S::U32 h) {
    return bitsAs<typename S::F32>(h << 16);
  }

  template <typename S>
  static typename S::U32 fromFloat(typename S::F32 f) {
    using U = typename S::U32;
    const U bits = bitsAs<U>(f);
    // Round the 16 dropped bits to even; a carry into the exponent is the
    // correct next binade, and past the largest finite value it gives Inf.
    const U rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    return f == f ? rounded : splat<U>(uint32_t{kQuietNan});
  }
};

}  // namespace
}  // namespace weft
