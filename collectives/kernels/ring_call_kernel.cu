// The GPU ring's kernel as libweft launches it for an allreduce, allgather,
// reduce-scatter, broadcast or reduce on a stream (src/device/device_ring.h):
// CTA c runs runRingCta (ring_call.h) on its share, over channels whose FIFOs
// live in this GPU's memory and in the ring neighbours' (mapped through CUDA
// IPC), or in pinned host memory that the host proxy serves. Instantiated per
// kind, so that no kernel carries the registers of another kind's schedule:
// the reducing kinds for every datatype with sum, prod, max and min (120),
// the copying ones per element size (8). nvcc takes 57-97 s for this file
// on a 2-core CI machine (sm_80, sm_90 and PTX; the longer beside another job).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "collectives/kernels/device_types.cuh"
#include "collectives/kernels/ring_call.h"
#include "weft/weft.h"

namespace weft {
namespace cuda {
namespace {

// The most threads per CTA (WEFT_NTHREADS picks 64 to 512 at launch): the
// register budget the compiler plans each kernel for.
constexpr int kMaxThreads = 512;

// The argument block lives in pinned host memory: the CTA reads it once into
// shared memory (word by word, all threads) instead of every thread reading
// its channels across PCIe; only the abort word is polled where it is.
template <typename T, typename Op, int Kind>
__global__ void __launch_bounds__(kMaxThreads) ringCallKernel(dev::RingCall* call) {
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

using RingKernel = void (*)(dev::RingCall*);

template <typename T, int Kind>
RingKernel kernelForOp(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return ringCallKernel<T, dev::OpSum, Kind>;
    case weftProd:
      return ringCallKernel<T, dev::OpProd, Kind>;
    case weftMax:
      return ringCallKernel<T, dev::OpMax, Kind>;
    case weftMin:
      return ringCallKernel<T, dev::OpMin, Kind>;
    default:
      return nullptr;
  }
}

// The kinds that move data without reducing it run on the unsigned integer
// type of the element's size: one kernel per size, not per datatype.
template <int Kind>
RingKernel kernelForCopy(size_t elemBytes) {
  switch (elemBytes) {
    case 1:
      return ringCallKernel<uint8_t, dev::OpSum, Kind>;
    case 2:
      return ringCallKernel<uint16_t, dev::OpSum, Kind>;
    case 4:
      return ringCallKernel<uint32_t, dev::OpSum, Kind>;
    case 8:
      return ringCallKernel<uint64_t, dev::OpSum, Kind>;
    default:
      return nullptr;
  }
}

template <typename T>
RingKernel kernelForKind(int32_t kind, weftRedOp_t op) {
  switch (kind) {
    case dev::kRingAllReduce:
      return kernelForOp<T, dev::kRingAllReduce>(op);
    case dev::kRingReduceScatter:
      return kernelForOp<T, dev::kRingReduceScatter>(op);
    case dev::kRingReduce:
      return kernelForOp<T, dev::kRingReduce>(op);
    case dev::kRingAllGather:
      return kernelForCopy<dev::kRingAllGather>(sizeof(T));
    case dev::kRingBroadcast:
      return kernelForCopy<dev::kRingBroadcast>(sizeof(T));
    default:
      return nullptr;
  }
}

// The kernel of one kind, datatype and op; nullptr for none.
RingKernel ringKernelFor(int32_t kind, weftDataType_t type, weftRedOp_t op) {
  switch (type) {
    case weftInt8:
      return kernelForKind<int8_t>(kind, op);
    case weftUint8:
      return kernelForKind<uint8_t>(kind, op);
    case weftInt32:
      return kernelForKind<int32_t>(kind, op);
    case weftUint32:
      return kernelForKind<uint32_t>(kind, op);
    case weftInt64:
      return kernelForKind<int64_t>(kind, op);
    case weftUint64:
      return kernelForKind<uint64_t>(kind, op);
    case weftFloat16:
      return kernelForKind<__half>(kind, op);
    case weftBfloat16:
      return kernelForKind<__nv_bfloat16>(kind, op);
    case weftFloat32:
      return kernelForKind<float>(kind, op);
    case weftFloat64:
      return kernelForKind<double>(kind, op);
    default:
      return nullptr;
  }
}

}  // namespace

// `call` is the device address of the pinned argument block; `kind` its kind;
// `threads` per CTA, up to kMaxThreads.
cudaError_t launchRingCall(int32_t kind, weftDataType_t type, weftRedOp_t op, dev::RingCall* call,
                           int nctas, int threads, cudaStream_t stream) {
  const RingKernel kernel = ringKernelFor(kind, type, op);
  if (kernel == nullptr || threads < 32 || threads > kMaxThreads) return cudaErrorInvalidValue;
  kernel<<<nctas, threads, 0, stream>>>(call);
  return cudaGetLastError();
}

// Loads every ring kernel into the current context now (cudaFuncGetAttributes
// does, under CUDA's lazy loading) and returns the most local memory one
// thread of them uses: for prepareKernels (cuda_runtime.cc), which says why.
cudaError_t loadRingKernels(size_t* maxLocalBytes, int* kernels) {
  *maxLocalBytes = 0;
  *kernels = 0;
  const int32_t kinds[] = {dev::kRingAllReduce, dev::kRingAllGather, dev::kRingReduceScatter,
                           dev::kRingBroadcast, dev::kRingReduce};
  for (int32_t kind : kinds)
    for (int t = 0; t < weftNumTypes; ++t)
      for (weftRedOp_t op : {weftSum, weftProd, weftMax, weftMin}) {
        const bool copies = kind == dev::kRingAllGather || kind == dev::kRingBroadcast;
        if (copies && op != weftSum) continue;  // one kernel per element size
        const RingKernel kernel = ringKernelFor(kind, static_cast<weftDataType_t>(t), op);
        if (kernel == nullptr) continue;
        cudaFuncAttributes attr{};
        const cudaError_t rc = cudaFuncGetAttributes(&attr, kernel);
        if (rc != cudaSuccess) return rc;
        if (attr.localSizeBytes > *maxLocalBytes) *maxLocalBytes = attr.localSizeBytes;
        ++*kernels;
      }
  return cudaSuccess;
}

}  // namespace cuda
}  // namespace weft
