// Element-wise reduction kernels for every datatype and op. Each thread walks a
// grid-stride loop; the 16-bit float types widen to float32, combine, and
// round to nearest even once (as the host kernels' float32 accumulation).
// Where every pointer is 16-byte aligned the loop moves 16-byte vectors (one
// 128-bit load per source and element group), and a second launch of the
// element loop takes the few elements the vectors leave over.
// Instantiated once per (type, op) through the switch at the bottom, which
// keeps the compile time of the CUDA part small.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "collectives/kernels/cuda_kernels.h"
#include "collectives/kernels/device_types.cuh"

namespace weft {
namespace cuda {
namespace {

constexpr int kMaxSources = 8;
struct Sources {
  const void* p[kMaxSources];
};

template <typename T, typename Op>
__global__ void reduceKernel(T* dst, Sources srcs, int nsrc, size_t count, float avgScale) {
  using A = typename Accum<T>::type;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    A acc = Accum<T>::load(static_cast<const T*>(srcs.p[0])[i]);
    for (int s = 1; s < nsrc; ++s)
      acc = Op::apply(acc, Accum<T>::load(static_cast<const T*>(srcs.p[s])[i]));
    if (avgScale != 0.0f) acc = Accum<T>::scale(acc, avgScale, nsrc);
    dst[i] = Accum<T>::store(acc);
  }
}

// The vector form: element group v of every source, combined per element.
template <typename T, typename Op>
__global__ void reduceVecKernel(uint4* dst, Sources srcs, int nsrc, size_t nvec, float avgScale) {
  using A = typename Accum<T>::type;
  constexpr int k = static_cast<int>(sizeof(uint4) / sizeof(T));
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t v = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < nvec;
       v += stride) {
    T x[k];
    A acc[k];
    uint4 raw = static_cast<const uint4*>(srcs.p[0])[v];
    memcpy(x, &raw, sizeof raw);
    for (int j = 0; j < k; ++j) acc[j] = Accum<T>::load(x[j]);
    for (int s = 1; s < nsrc; ++s) {
      raw = static_cast<const uint4*>(srcs.p[s])[v];
      memcpy(x, &raw, sizeof raw);
      for (int j = 0; j < k; ++j) acc[j] = Op::apply(acc[j], Accum<T>::load(x[j]));
    }
    for (int j = 0; j < k; ++j) {
      if (avgScale != 0.0f) acc[j] = Accum<T>::scale(acc[j], avgScale, nsrc);
      x[j] = Accum<T>::store(acc[j]);
    }
    memcpy(&raw, x, sizeof raw);
    dst[v] = raw;
  }
}

unsigned gridFor(size_t items, int threads) {
  size_t blocks = (items + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  return static_cast<unsigned>(blocks > 1024 ? 1024 : blocks);
}

template <typename T, typename Op>
int launch(void* dst, const void* const* srcs, int nsrc, size_t count, bool avg,
           cudaStream_t stream) {
  Sources s{};
  bool aligned = reinterpret_cast<uintptr_t>(dst) % sizeof(uint4) == 0;
  for (int i = 0; i < nsrc; ++i) {
    s.p[i] = srcs[i];
    aligned = aligned && reinterpret_cast<uintptr_t>(srcs[i]) % sizeof(uint4) == 0;
  }
  const int threads = 256;
  const float scale = avg ? 1.0f / static_cast<float>(nsrc) : 0.0f;
  size_t done = 0;  // elements the vector form covers
  if (aligned) {
    const size_t nvec = count * sizeof(T) / sizeof(uint4);
    if (nvec > 0)
      reduceVecKernel<T, Op><<<gridFor(nvec, threads), threads, 0, stream>>>(
          static_cast<uint4*>(dst), s, nsrc, nvec, scale);
    done = nvec * (sizeof(uint4) / sizeof(T));
  }
  if (done < count) {
    for (int i = 0; i < nsrc; ++i) s.p[i] = static_cast<const T*>(srcs[i]) + done;
    reduceKernel<T, Op><<<gridFor(count - done, threads), threads, 0, stream>>>(
        static_cast<T*>(dst) + done, s, nsrc, count - done, scale);
  }
  return cudaGetLastError();
}

template <typename T>
int launchOp(weftRedOp_t op, void* dst, const void* const* srcs, int nsrc, size_t count,
             cudaStream_t stream) {
  switch (op) {
    case weftSum:
      return launch<T, dev::OpSum>(dst, srcs, nsrc, count, false, stream);
    case weftProd:
      return launch<T, dev::OpProd>(dst, srcs, nsrc, count, false, stream);
    case weftMax:
      return launch<T, dev::OpMax>(dst, srcs, nsrc, count, false, stream);
    case weftMin:
      return launch<T, dev::OpMin>(dst, srcs, nsrc, count, false, stream);
    case weftAvg:
      return launch<T, dev::OpSum>(dst, srcs, nsrc, count, true, stream);
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {  // the bitwise ops take integers only
    switch (op) {
      case weftBand:
        return launch<T, dev::OpBand>(dst, srcs, nsrc, count, false, stream);
      case weftBor:
        return launch<T, dev::OpBor>(dst, srcs, nsrc, count, false, stream);
      case weftBxor:
        return launch<T, dev::OpBxor>(dst, srcs, nsrc, count, false, stream);
      default:
        break;
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace

int reduce(weftDataType_t type, weftRedOp_t op, void* dst, const void* const* srcs, int nsrc,
           size_t count, void* stream) {
  if (nsrc < 1 || nsrc > kMaxSources) return cudaErrorInvalidValue;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case weftInt8:
      return launchOp<int8_t>(op, dst, srcs, nsrc, count, s);
    case weftUint8:
      return launchOp<uint8_t>(op, dst, srcs, nsrc, count, s);
    case weftInt32:
      return launchOp<int32_t>(op, dst, srcs, nsrc, count, s);
    case weftUint32:
      return launchOp<uint32_t>(op, dst, srcs, nsrc, count, s);
    case weftInt64:
      return launchOp<int64_t>(op, dst, srcs, nsrc, count, s);
    case weftUint64:
      return launchOp<uint64_t>(op, dst, srcs, nsrc, count, s);
    case weftFloat16:
      return launchOp<__half>(op, dst, srcs, nsrc, count, s);
    case weftBfloat16:
      return launchOp<__nv_bfloat16>(op, dst, srcs, nsrc, count, s);
    case weftFloat32:
      return launchOp<float>(op, dst, srcs, nsrc, count, s);
    case weftFloat64:
      return launchOp<double>(op, dst, srcs, nsrc, count, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace weft
