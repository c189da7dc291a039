// The GPU-driven data-movement kernel: a block runs the ring allreduce
// schedule of ring_allreduce_schedule.h over device channels, polling and
// bumping the FIFO counters itself (no host involvement per chunk). This file
// holds the single-GPU form (one block per rank, all ranks in one kernel), the
// harness for the GPU tests and the bandwidth check; the multi-process form
// differs only in where the channels' memory lives (peer-mapped or host-mapped).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "collectives/kernels/cuda_kernels.h"
#include "collectives/kernels/device_types.cuh"

namespace weft {
namespace cuda {
namespace {

constexpr int kMaxLocalRanks = 16;
struct RankPointers {
  const void* in[kMaxLocalRanks];
  void* out[kMaxLocalRanks];
};

template <typename T, typename Op>
__global__ void ringAllreduceKernel(RankPointers ptrs, size_t count, int nranks,
                                    const dev::Channel* links) {
  __shared__ int shared;
  const int r = static_cast<int>(blockIdx.x);
  dev::RingArgs ring{r, nranks, links[r], links[(r + nranks - 1) % nranks]};
  dev::ringAllreduce<T, StoredOp<T, Op>>(static_cast<const T*>(ptrs.in[r]),
                                         static_cast<T*>(ptrs.out[r]), count, ring,
                                         dev::BlockLanes{}, &shared);
}

template <typename T>
int launchOp(weftRedOp_t op, const RankPointers& p, size_t count, int nranks,
             const dev::Channel* links, int threads, cudaStream_t stream) {
  switch (op) {
    case weftSum:
      ringAllreduceKernel<T, dev::OpSum><<<nranks, threads, 0, stream>>>(p, count, nranks, links);
      break;
    case weftProd:
      ringAllreduceKernel<T, dev::OpProd><<<nranks, threads, 0, stream>>>(p, count, nranks, links);
      break;
    case weftMax:
      ringAllreduceKernel<T, dev::OpMax><<<nranks, threads, 0, stream>>>(p, count, nranks, links);
      break;
    case weftMin:
      ringAllreduceKernel<T, dev::OpMin><<<nranks, threads, 0, stream>>>(p, count, nranks, links);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

int ringAllreduceLocal(weftDataType_t type, weftRedOp_t op, const void* const* in, void* const* out,
                       size_t count, int nranks, const dev::Channel* links, int threads,
                       void* stream) {
  if (nranks < 1 || nranks > kMaxLocalRanks || threads < 32) return cudaErrorInvalidValue;
  RankPointers p{};
  for (int r = 0; r < nranks; ++r) {
    p.in[r] = in[r];
    p.out[r] = out[r];
  }
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case weftInt8:
      return launchOp<int8_t>(op, p, count, nranks, links, threads, s);
    case weftUint8:
      return launchOp<uint8_t>(op, p, count, nranks, links, threads, s);
    case weftInt32:
      return launchOp<int32_t>(op, p, count, nranks, links, threads, s);
    case weftUint32:
      return launchOp<uint32_t>(op, p, count, nranks, links, threads, s);
    case weftInt64:
      return launchOp<int64_t>(op, p, count, nranks, links, threads, s);
    case weftUint64:
      return launchOp<uint64_t>(op, p, count, nranks, links, threads, s);
    case weftFloat16:
      return launchOp<__half>(op, p, count, nranks, links, threads, s);
    case weftBfloat16:
      return launchOp<__nv_bfloat16>(op, p, count, nranks, links, threads, s);
    case weftFloat32:
      return launchOp<float>(op, p, count, nranks, links, threads, s);
    case weftFloat64:
      return launchOp<double>(op, p, count, nranks, links, threads, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace weft
