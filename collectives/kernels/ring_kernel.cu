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
                                    const dev::Channel* links, uint64_t first) {
  __shared__ int shared;
  const int r = static_cast<int>(blockIdx.x);
  dev::RingArgs ring{r, nranks, links[r], links[(r + nranks - 1) % nranks], first, first};
  dev::ringAllreduce<T, StoredOp<T, Op>>(static_cast<const T*>(ptrs.in[r]),
                                         static_cast<T*>(ptrs.out[r]), count, ring,
                                         dev::BlockLanes{}, &shared);
}

// Block 0 sends message k on links[0] and waits for the answer on links[1];
// block 1 answers. Empty messages: only the handshakes are timed.
__global__ void roundTripKernel(const dev::Channel* links, int iters, uint64_t first) {
  __shared__ int shared;
  const dev::BlockLanes lanes;
  const dev::Channel out = links[blockIdx.x == 0 ? 0 : 1], in = links[blockIdx.x == 0 ? 1 : 0];
  uint64_t bytes = 0;
  for (uint64_t k = first; k < first + static_cast<uint64_t>(iters); ++k) {
    if (blockIdx.x == 0) {
      if (!dev::waitCredit(out, k, lanes, &shared)) return;
      dev::post(out, k, 0, lanes);
      if (!dev::waitData(in, k, lanes, &shared, &bytes)) return;
      dev::consume(in, k, lanes);
    } else {
      if (!dev::waitData(in, k, lanes, &shared, &bytes)) return;
      dev::consume(in, k, lanes);
      if (!dev::waitCredit(out, k, lanes, &shared)) return;
      dev::post(out, k, 0, lanes);
    }
  }
}

template <typename T>
int launchSum(const RankPointers& p, size_t count, int nranks, const dev::Channel* links,
              int threads, uint64_t first, cudaStream_t stream) {
  ringAllreduceKernel<T, dev::OpSum>
      <<<nranks, threads, 0, stream>>>(p, count, nranks, links, first);
  return cudaGetLastError();
}

}  // namespace

int ringAllreduceLocal(weftDataType_t type, weftRedOp_t op, const void* const* in, void* const* out,
                       size_t count, int nranks, const dev::Channel* links, int threads,
                       uint64_t first, void* stream) {
  if (op != weftSum || nranks < 1 || nranks > kMaxLocalRanks || threads < 32)
    return cudaErrorInvalidValue;
  RankPointers p{};
  for (int r = 0; r < nranks; ++r) {
    p.in[r] = in[r];
    p.out[r] = out[r];
  }
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case weftInt8:
      return launchSum<int8_t>(p, count, nranks, links, threads, first, s);
    case weftUint8:
      return launchSum<uint8_t>(p, count, nranks, links, threads, first, s);
    case weftInt32:
      return launchSum<int32_t>(p, count, nranks, links, threads, first, s);
    case weftUint32:
      return launchSum<uint32_t>(p, count, nranks, links, threads, first, s);
    case weftInt64:
      return launchSum<int64_t>(p, count, nranks, links, threads, first, s);
    case weftUint64:
      return launchSum<uint64_t>(p, count, nranks, links, threads, first, s);
    case weftFloat16:
      return launchSum<__half>(p, count, nranks, links, threads, first, s);
    case weftBfloat16:
      return launchSum<__nv_bfloat16>(p, count, nranks, links, threads, first, s);
    case weftFloat32:
      return launchSum<float>(p, count, nranks, links, threads, first, s);
    case weftFloat64:
      return launchSum<double>(p, count, nranks, links, threads, first, s);
    default:
      return cudaErrorInvalidValue;
  }
}

int channelRoundTrips(const dev::Channel* links, int iters, int threads, uint64_t first,
                      void* stream) {
  if (iters < 0 || threads < 32) return cudaErrorInvalidValue;
  roundTripKernel<<<2, threads, 0, static_cast<cudaStream_t>(stream)>>>(links, iters, first);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace weft
