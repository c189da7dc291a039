// How each datatype is combined on the GPU: the accumulator type (float32 for
// the 16-bit floats, the type itself otherwise), exact widening, one rounding
// to nearest even on the way out, and the average's division (integers: the
// truncating division of the sum, as on the host).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "collectives/kernels/ring_allreduce_schedule.h"

namespace weft {
namespace cuda {

template <typename T>
struct Accum {
  using type = T;  // integers wrap in the ops themselves (ring_allreduce_schedule.h)
  __host__ __device__ static T load(T v) { return v; }
  __host__ __device__ static T store(T v) { return v; }
  __host__ __device__ static T scale(T v, float s, int n) {
    if constexpr (std::is_floating_point_v<T>) {
      return v / static_cast<T>(n);  // divide, as the host does (not * 1/n)
    } else {
      return static_cast<T>(v / n);
    }
  }
};

template <>
struct Accum<__half> {
  using type = float;
  __host__ __device__ static float load(__half v) { return __half2float(v); }
  __host__ __device__ static __half store(float v) { return __float2half_rn(v); }
  __host__ __device__ static float scale(float v, float, int n) {
    return v / static_cast<float>(n);
  }
};

template <>
struct Accum<__nv_bfloat16> {
  using type = float;
  __host__ __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __host__ __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
  __host__ __device__ static float scale(float v, float, int n) {
    return v / static_cast<float>(n);
  }
};

// Ops on stored values for the ring schedule (which combines stored elements
// piece by piece): widen, combine, narrow.
template <typename T, typename Op>
struct StoredOp {
  __host__ __device__ static T apply(T a, T b) {
    return Accum<T>::store(Op::apply(Accum<T>::load(a), Accum<T>::load(b)));
  }
};

}  // namespace cuda
}  // namespace weft
