// The per-element operations of the host reductions, written once for
// scalars and GCC vectors alike (`V` is either), so that every ISA variant
// computes each output element with the very same operation:
//   - integers: sum and prod wrap (the kernels run them on the unsigned type of
//     the same width); max and min compare in the element's own type; band,
//     bor and bxor act on the bits (integers only);
//   - float32/float64: IEEE sum, prod, division; max(a, b) = a < b ? b : a and
//     min(a, b) = b < a ? b : a (so on equal values such as -0 and +0 the first
//     operand wins); a NaN in either operand gives NaN, and every NaN result is
//     the canonical quiet NaN, whatever payloads and operand order the
//     hardware would have propagated;
//   - float16/bfloat16: widen to float32 exactly, apply the float32 operation,
//     round to nearest even (reduce_float16.h).
// Internal linkage on purpose, as in reduce_float16.h.
#pragma once

#include <cstdint>

#include "collectives/reduce_float16.h"

namespace weft {
namespace {

// Storage element type -> the lane set's scalar or vector of it. The 16-bit
// float formats are stored as uint16_t (S::H16).
template <typename S, typename T>
struct VecOf;
template <typename S>
struct VecOf<S, int8_t> {
  using type = typename S::I8;
};
template <typename S>
struct VecOf<S, uint8_t> {
  using type = typename S::U8;
};
template <typename S>
struct VecOf<S, uint16_t> {
  using type = typename S::H16;
};
template <typename S>
struct VecOf<S, int32_t> {
  using type = typename S::I32;
};
template <typename S>
struct VecOf<S, uint32_t> {
  using type = typename S::U32;
};
template <typename S>
struct VecOf<S, int64_t> {
  using type = typename S::I64;
};
template <typename S>
struct VecOf<S, uint64_t> {
  using type = typename S::U64;
};
template <typename S>
struct VecOf<S, float> {
  using type = typename S::F32;
};
template <typename S>
struct VecOf<S, double> {
  using type = typename S::F64;
};

// Plain operations. On floats a NaN result appears exactly where IEEE gives
// one, or where either operand of max/min is NaN; its bits are not yet fixed.
struct AddOp {
  template <typename V>
  static V apply(V a, V b) {
    return static_cast<V>(a + b);
  }
};
struct MulOp {
  template <typename V>
  static V apply(V a, V b) {
    return static_cast<V>(a * b);
  }
};
struct MaxOp {
  template <typename V>
  static V apply(V a, V b) {
    return a < b ? b : a;
  }
};
struct MinOp {
  template <typename V>
  static V apply(V a, V b) {
    return b < a ? b : a;
  }
};
// Bitwise ops, for the integer types only (on GCC vectors lane by lane).
struct AndOp {
  template <typename V>
  static V apply(V a, V b) {
    return static_cast<V>(a & b);
  }
};
struct OrOp {
  template <typename V>
  static V apply(V a, V b) {
    return static_cast<V>(a | b);
  }
};
struct XorOp {
  template <typename V>
  static V apply(V a, V b) {
    return static_cast<V>(a ^ b);
  }
};
// The float forms also pick b when b is NaN, so that a NaN in either operand
// shows in the result.
struct FloatMaxOp {
  template <typename V>
  static V apply(V a, V b) {
    return (a < b) | (b != b) ? b : a;
  }
};
struct FloatMinOp {
  template <typename V>
  static V apply(V a, V b) {
    return (b < a) | (b != b) ? b : a;
  }
};

template <typename T>
struct FloatBits;
template <>
struct FloatBits<float> {
  using type = uint32_t;
  static constexpr uint32_t kQuietNan = 0x7FC00000u;
};
template <>
struct FloatBits<double> {
  using type = uint64_t;
  static constexpr uint64_t kQuietNan = 0x7FF8000000000000u;
};

// r, with every NaN lane replaced by the canonical quiet NaN of T.
template <typename S, typename T, typename V>
inline V canonicalNan(V r) {
  using Bits = typename VecOf<S, typename FloatBits<T>::type>::type;
  return r == r ? r : bitsAs<V>(splat<Bits>(FloatBits<T>::kQuietNan));
}

// float32 / float64 combine.
template <typename S, typename T, typename Plain>
struct FloatOp {
  template <typename V>
  static V apply(V a, V b) {
    return canonicalNan<S, T>(Plain::apply(a, b));
  }
};

// 16-bit float lanes to float32 and back: F16C when the lane set has it and
// the format is binary16, else the portable code of reduce_float16.h. Both
// give the same bits (the NaN is made canonical before F16C narrows it, and
// float32's canonical NaN narrows to binary16's).
template <typename S, typename Format>
struct HalfLanes {
  static typename S::F32 toFloat(typename S::H16 h) {
    if constexpr (Format::kBinary16 && S::kHardwareBinary16) {
      return S::binary16ToFloat(h);
    } else {
      return Format::template toFloat<S>(S::widen(h));
    }
  }
  static typename S::H16 fromFloat(typename S::F32 f) {
    if constexpr (Format::kBinary16 && S::kHardwareBinary16) {
      return S::floatToBinary16(canonicalNan<S, float>(f));
    } else {
      return S::narrow(Format::template fromFloat<S>(f));
    }
  }
};

// float16 / bfloat16 combine: Format is Fp16Format or Bf16Format.
template <typename S, typename Format, typename Plain>
struct HalfOp {
  static typename S::H16 apply(typename S::H16 a, typename S::H16 b) {
    using Lanes = HalfLanes<S, Format>;
    return Lanes::fromFloat(Plain::apply(Lanes::toFloat(a), Lanes::toFloat(b)));
  }
};

// Division by the rank count (the end of weftAvg) for the float types.
template <typename S, typename T>
struct FloatDivide {
  template <typename V>
  static V apply(V x, int nranks) {
    return canonicalNan<S, T>(x / static_cast<T>(nranks));
  }
};

template <typename S, typename Format>
struct HalfDivide {
  static typename S::H16 apply(typename S::H16 x, int nranks) {
    using Lanes = HalfLanes<S, Format>;
    return Lanes::fromFloat(Lanes::toFloat(x) / static_cast<float>(nranks));
  }
};

}  // namespace
}  // namespace weft
