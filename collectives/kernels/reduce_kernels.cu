// Element-wise reduction kernels for every datatype and op. Each thread walks a
// grid-stride loop; the 16-bit float types widen to float32, combine, and
// round to nearest even once (as the host kernels' float32 accumulation).
// Instantiated once per (type, op) through the switch at the bottom, which
// keeps the compile time of the CUDA part small.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

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

template <typename T, typename Op>
int launch(void* dst, const void* const* srcs, int nsrc, size_t count, bool avg,
           cudaStream_t stream) {
  Sources s{};
  for (int i = 0; i < nsrc; ++i) s.p[i] = srcs[i];
  const int threads = 256;
  size_t blocks = (count + threads - 1) / threads;
  if (blocks > 1024) blocks = 1024;
  if (blocks == 0) return cudaSuccess;
  reduceKernel<T, Op><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<T*>(dst), s, nsrc, count, avg ? 1.0f / static_cast<float>(nsrc) : 0.0f);
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
      return cudaErrorInvalidValue;
  }
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
