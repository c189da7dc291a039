// The GPU ring's kernel as libweft launches it for an allreduce on a stream
// (src/device/device_ring.h): CTA c runs runRingCta (ring_call.h) on its
// share, over channels whose FIFOs live in this GPU's memory and in the ring
// neighbours' (mapped through CUDA IPC). Instantiated for every datatype and
// for sum, prod, max and min: 40 kernels, each one small schedule.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "collectives/kernels/device_types.cuh"
#include "collectives/kernels/ring_call.h"
#include "weft/weft.h"

namespace weft {
namespace cuda {
namespace {

constexpr int kThreads = 512;

// The argument block lives in pinned host memory: the CTA reads it once into
// shared memory (word by word, all threads) instead of every thread reading
// its channels across PCIe; only the abort word is polled where it is.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) ringCallKernel(dev::RingCall* call) {
  __shared__ dev::RingCall local;
  __shared__ int shared;
  const auto* from = reinterpret_cast<const unsigned int*>(call);
  auto* to = reinterpret_cast<unsigned int*>(&local);
  for (unsigned i = threadIdx.x; i < sizeof(dev::RingCall) / sizeof(unsigned); i += blockDim.x)
    to[i] = from[i];
  __syncthreads();
  const int c = static_cast<int>(blockIdx.x);
  dev::runRingCta<T, StoredOp<T, Op>>(&local, c, dev::BlockLanes{}, &shared);
  if (threadIdx.x == 0) call->status[c] = local.status[c];
}

template <typename T>
cudaError_t launchOp(weftRedOp_t op, dev::RingCall* call, int nctas, cudaStream_t stream) {
  switch (op) {
    case weftSum:
      ringCallKernel<T, dev::OpSum><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftProd:
      ringCallKernel<T, dev::OpProd><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftMax:
      ringCallKernel<T, dev::OpMax><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftMin:
      ringCallKernel<T, dev::OpMin><<<nctas, kThreads, 0, stream>>>(call);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

// `call` is the device address of the pinned argument block.
cudaError_t launchRingCall(weftDataType_t type, weftRedOp_t op, dev::RingCall* call, int nctas,
                           cudaStream_t stream) {
  switch (type) {
    case weftInt8:
      return launchOp<int8_t>(op, call, nctas, stream);
    case weftUint8:
      return launchOp<uint8_t>(op, call, nctas, stream);
    case weftInt32:
      return launchOp<int32_t>(op, call, nctas, stream);
    case weftUint32:
      return launchOp<uint32_t>(op, call, nctas, stream);
    case weftInt64:
      return launchOp<int64_t>(op, call, nctas, stream);
    case weftUint64:
      return launchOp<uint64_t>(op, call, nctas, stream);
    case weftFloat16:
      return launchOp<__half>(op, call, nctas, stream);
    case weftBfloat16:
      return launchOp<__nv_bfloat16>(op, call, nctas, stream);
    case weftFloat32:
      return launchOp<float>(op, call, nctas, stream);
    case weftFloat64:
      return launchOp<double>(op, call, nctas, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace weft
