// GPU kernel bandwidth, measured beside cudaMemcpy in the same run:
//   - cudaMemcpy device-to-device of N bytes (moves 2N: read + write);
//   - weft's reduce kernel, out = a op b over N bytes each (moves 3N);
//   - the data-movement kernel's ring allreduce with R ranks on this GPU, one
//     block each (busbw as nccl-tests: 2(R-1)/R x N / time), at N and at
//     N/16, N/256 (where the channel handshakes weigh more);
//   - the round trip of an empty channel message between two blocks.
// Prints GB/s of memory traffic and the reduce/memcpy ratio (the target is at
// least 0.85). Without a GPU it prints "SKIPPED: no GPU" and exits 0. Output
// is line-buffered, so a stop by a timeout keeps what was measured.
//   usage: gpu_kernel_perf [bytes=256M] [iterations=20] [ranks=4]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/kernels/cuda_kernels.h"
#include "collectives/kernels/ring_call.h"
#include "gpu/gpu_harness.h"

namespace {

template <typename F>
double secondsPerIteration(int iters, F body) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  body();  // warm-up
  cudaEventRecord(start);
  for (int i = 0; i < iters; ++i) body();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / iters;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string why = gpu_test::whyNoGpu();
  if (!why.empty()) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 0;
  }
  const size_t bytes = argc > 1 ? gpu_test::parseBytes(argv[1]) : size_t{256} << 20;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  const int ranks = argc > 3 ? std::atoi(argv[3]) : 4;
  const size_t count = bytes / sizeof(float);
  void *a, *b, *c;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
      cudaMalloc(&c, bytes) != cudaSuccess) {
    std::printf("error: cannot allocate 3 x %zu bytes\n", bytes);
    return 1;
  }
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  const double tCopy =
      secondsPerIteration(iters, [&]() { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); });
  const void* srcs[2] = {a, b};
  const double tReduce = secondsPerIteration(
      iters, [&]() { weft::cuda::reduce(weftFloat32, weftSum, c, srcs, 2, count, nullptr); });
  const double copyGBs = 2.0 * bytes / tCopy / 1e9;
  const double reduceGBs = 3.0 * bytes / tReduce / 1e9;
  std::printf("# %zu bytes, %d iterations\n", bytes, iters);
  std::printf("cudaMemcpy D2D : %8.1f GB/s of memory traffic (%.3f ms)\n", copyGBs, tCopy * 1e3);
  std::printf("reduce kernel  : %8.1f GB/s of memory traffic (%.3f ms)\n", reduceGBs,
              tReduce * 1e3);
  std::printf("reduce/memcpy  : %8.2f (target >= 0.85)\n", reduceGBs / copyGBs);

  std::vector<void*> in(ranks), out(ranks);
  for (int r = 0; r < ranks; ++r) {
    cudaMalloc(&in[r], bytes / ranks);
    cudaMalloc(&out[r], bytes / ranks);
    cudaMemset(in[r], 0, bytes / ranks);
  }
  const uint32_t slotBytes = 256 << 10;
  gpu_test::LocalRing ring(ranks, 8, slotBytes);
  uint64_t first = 0;  // the links' counters carry on across calls
  for (size_t part : {size_t{1}, size_t{16}, size_t{256}}) {
    const size_t perRank = bytes / ranks / sizeof(float) / part;
    const double tRing = secondsPerIteration(iters, [&]() {
      weft::cuda::ringAllreduceLocal(weftFloat32, weftSum, in.data(), out.data(), perRank, ranks,
                                     ring.deviceLinks(), 512, first, nullptr);
      first += weft::dev::ringMessages(perRank, ranks, slotBytes, sizeof(float));
    });
    const double algbw = perRank * sizeof(float) / tRing / 1e9;
    std::printf(
        "ring allreduce : %d ranks on one GPU, %zu bytes each: %.3f ms, algbw %.1f GB/s, "
        "busbw %.1f GB/s\n",
        ranks, perRank * sizeof(float), tRing * 1e3, algbw, algbw * 2.0 * (ranks - 1) / ranks);
  }

  gpu_test::LocalRing pair(2, 4, 64 << 10);
  const int trips = 2000;
  uint64_t tripFirst = 0;
  const double tTrips = secondsPerIteration(1, [&]() {
    weft::cuda::channelRoundTrips(pair.deviceLinks(), trips, 512, tripFirst, nullptr);
    tripFirst += trips;
  });
  std::printf("channel round trip: %.2f us (empty messages, 2 blocks of 512 threads)\n",
              tTrips * 1e6 / trips);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::printf("error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}
