// The lane set of a vector ISA variant: GCC vectors of kVectorBytes bytes for
// every storage type, and 16-bit float lanes that widen to one float32 vector.
// The including translation unit defines `constexpr size_t kVectorBytes` (32
// for AVX2, 64 for AVX-512) in weft's anonymous namespace first; its compile
// flags decide which instructions these vectors become.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace weft {
namespace {

static_assert(kVectorBytes == 32 || kVectorBytes == 64, "define kVectorBytes before including");

struct VectorLanes {
  static constexpr bool kOneLane = false;
  typedef int8_t I8 __attribute__((vector_size(kVectorBytes)));
  typedef uint8_t U8 __attribute__((vector_size(kVectorBytes)));
  typedef int32_t I32 __attribute__((vector_size(kVectorBytes)));
  typedef uint32_t U32 __attribute__((vector_size(kVectorBytes)));
  typedef int64_t I64 __attribute__((vector_size(kVectorBytes)));
  typedef uint64_t U64 __attribute__((vector_size(kVectorBytes)));
  typedef float F32 __attribute__((vector_size(kVectorBytes)));
  typedef double F64 __attribute__((vector_size(kVectorBytes)));
  // 16-bit floats: half as many bytes, as many lanes as F32.
  typedef uint16_t H16 __attribute__((vector_size(kVectorBytes / 2)));

#ifdef __AVX512F__
  // The AVX-512 conversions below are the zero-masked forms with every lane
  // enabled: the unmasked ones trip GCC 12's -Wmaybe-uninitialized.
  static constexpr __mmask16 kAllLanes = 0xFFFF;
#endif

  // 16-bit lanes <-> 32-bit lanes. GCC 12 turns __builtin_convertvector into
  // twice the instructions these intrinsics take. Narrowing may saturate or
  // truncate: every lane holds a value below 2^16 here, so nothing is lost.
  static U32 widen(H16 h) {
#ifdef __AVX512F__
    if constexpr (kVectorBytes == 64)
      return U32(_mm512_maskz_cvtepu16_epi32(kAllLanes, __m256i(h)));
#endif
    return piecewise<U32, __m256i, __m128i>(h, [](__m128i x) { return _mm256_cvtepu16_epi32(x); });
  }

  static H16 narrow(U32 u) {
#ifdef __AVX512F__
    if constexpr (kVectorBytes == 64)
      return H16(_mm512_maskz_cvtepi32_epi16(kAllLanes, __m512i(u)));
#endif
    return piecewise<H16, __m128i, __m256i>(u, [](__m256i x) {
      return _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    });
  }

  // binary16 <-> float32 through F16C (or its AVX-512 form). Widening is
  // exact; narrowing rounds to nearest even whatever MXCSR says (imm 0), as
  // Fp16Format::fromFloat does, NaNs aside (callers make them canonical
  // first). Both ISA variants require F16C at run time.
  static constexpr bool kHardwareBinary16 = true;

  static F32 binary16ToFloat(H16 h) {
#ifdef __AVX512F__
    if constexpr (kVectorBytes == 64) return F32(_mm512_maskz_cvtph_ps(kAllLanes, __m256i(h)));
#endif
    return piecewise<F32, __m256, __m128i>(h, [](__m128i x) { return _mm256_cvtph_ps(x); });
  }

  static H16 floatToBinary16(F32 f) {
#ifdef __AVX512F__
    if constexpr (kVectorBytes == 64) {
      return H16(_mm512_maskz_cvtps_ph(kAllLanes, __m512(f), _MM_FROUND_TO_NEAREST_INT));
    }
#endif
    return piecewise<H16, __m128i, __m256>(
        f, [](__m256 x) { return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT); });
  }

 private:
  // Out = fn applied to each 8-lane piece of `in` (one piece for AVX2; two
  // for the AVX-512 source built without AVX-512, see reduce_avx512.cc).
  template <typename Out, typename PieceOut, typename PieceIn, typename In, typename Fn>
  static Out piecewise(In in, Fn fn) {
    constexpr size_t kPieces = sizeof(In) / sizeof(PieceIn);
    static_assert(sizeof(Out) == kPieces * sizeof(PieceOut), "pieces must tile both vectors");
    Out out;
    for (size_t at = 0; at < kPieces; ++at) {
      PieceIn piece;
      __builtin_memcpy(&piece, reinterpret_cast<const char*>(&in) + at * sizeof(PieceIn),
                       sizeof(PieceIn));
      const PieceOut converted = fn(piece);
      __builtin_memcpy(reinterpret_cast<char*>(&out) + at * sizeof(PieceOut), &converted,
                       sizeof(PieceOut));
    }
    return out;
  }
};

}  // namespace
}  // namespace weft
