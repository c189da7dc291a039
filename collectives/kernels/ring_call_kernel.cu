// The GPU ring's kernel as libweft launches it for an allreduce, allgather,
// reduce-scatter, broadcast or reduce on a stream (src/device/device_ring.h):
// CTA c runs runRingCta (ring_call.h) on its share, over channels whose FIFOs
// live in this GPU's memory and in the ring neighbours' (mapped through CUDA
// IPC), or in pinned host memory that the host proxy serves. Instantiated per
// kind, so that no kernel carries the registers of another kind's schedule:
// the reducing kinds for every datatype with sum, prod, max and min (120),
// the copying ones per element size (8). nvcc takes about 57 s for this file
// on a 2-core CI machine (sm_80, sm_90 and PTX).
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
template <typename T, typename Op, int Kind>
__global__ void __launch_bounds__(kThreads) ringCallKernel(dev::RingCall* call) {
  __shared__ dev::RingCall local;
  __shared__ int shared;
  const int c = static_cast<int>(blockIdx.x);
  // For the host's timeout message only (device_ring_call.cc): a plain store
  // that nothing orders against, since nothing waits on it.
  if (threadIdx.x == 0) reinterpret_cast<volatile int32_t*>(call->status)[c] = dev::kRingCtaStarted;
  const auto* from = reinterpret_cast<const unsigned int*>(call);
  auto* to = reinterpret_cast<unsigned int*>(&local);
  for (unsigned i = threadIdx.x; i < sizeof(dev::RingCall) / sizeof(unsigned); i += blockDim.x)
    to[i] = from[i];
  __syncthreads();
  dev::runRingCta<T, StoredOp<T, Op>, Kind>(&local, c, dev::BlockLanes{}, &shared);
  if (threadIdx.x == 0) call->status[c] = local.status[c];
}

template <typename T, int Kind>
cudaError_t launchOp(weftRedOp_t op, dev::RingCall* call, int nctas, cudaStream_t stream) {
  switch (op) {
    case weftSum:
      ringCallKernel<T, dev::OpSum, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftProd:
      ringCallKernel<T, dev::OpProd, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftMax:
      ringCallKernel<T, dev::OpMax, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case weftMin:
      ringCallKernel<T, dev::OpMin, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// The kinds that move data without reducing it run on the unsigned integer
// type of the element's size: one kernel per size, not per datatype.
template <int Kind>
cudaError_t launchCopy(size_t elemBytes, dev::RingCall* call, int nctas, cudaStream_t stream) {
  switch (elemBytes) {
    case 1:
      ringCallKernel<uint8_t, dev::OpSum, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case 2:
      ringCallKernel<uint16_t, dev::OpSum, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case 4:
      ringCallKernel<uint32_t, dev::OpSum, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    case 8:
      ringCallKernel<uint64_t, dev::OpSum, Kind><<<nctas, kThreads, 0, stream>>>(call);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t launchKind(int32_t kind, weftRedOp_t op, dev::RingCall* call, int nctas,
                       cudaStream_t stream) {
  switch (kind) {
    case dev::kRingAllReduce:
      return launchOp<T, dev::kRingAllReduce>(op, call, nctas, stream);
    case dev::kRingReduceScatter:
      return launchOp<T, dev::kRingReduceScatter>(op, call, nctas, stream);
    case dev::kRingReduce:
      return launchOp<T, dev::kRingReduce>(op, call, nctas, stream);
    case dev::kRingAllGather:
      return launchCopy<dev::kRingAllGather>(sizeof(T), call, nctas, stream);
    case dev::kRingBroadcast:
      return launchCopy<dev::kRingBroadcast>(sizeof(T), call, nctas, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

// `call` is the device address of the pinned argument block; `kind` its kind.
cudaError_t launchRingCall(int32_t kind, weftDataType_t type, weftRedOp_t op, dev::RingCall* call,
                           int nctas, cudaStream_t stream) {
  switch (type) {
    case weftInt8:
      return launchKind<int8_t>(kind, op, call, nctas, stream);
    case weftUint8:
      return launchKind<uint8_t>(kind, op, call, nctas, stream);
    case weftInt32:
      return launchKind<int32_t>(kind, op, call, nctas, stream);
    case weftUint32:
      return launchKind<uint32_t>(kind, op, call, nctas, stream);
    case weftInt64:
      return launchKind<int64_t>(kind, op, call, nctas, stream);
    case weftUint64:
      return launchKind<uint64_t>(kind, op, call, nctas, stream);
    case weftFloat16:
      return launchKind<__half>(kind, op, call, nctas, stream);
    case weftBfloat16:
      return launchKind<__nv_bfloat16>(kind, op, call, nctas, stream);
    case weftFloat32:
      return launchKind<float>(kind, op, call, nctas, stream);
    case weftFloat64:
      return launchKind<double>(kind, op, call, nctas, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace weft
