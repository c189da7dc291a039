// Communication/computation overlap on one GPU: a cuBLAS GEMM loop on its own
// stream beside weft allreduces on the ranks' streams (two or more ranks of
// this process, weftCommInitAll, all on the current GPU: allreduce runs on
// weft's GPU ring, which uses at most WEFT_MAX_CTAS thread blocks per rank).
// Times each alone, then both at once, and prints
//   overlap efficiency = (t_gemm + t_comm - t_both) / min(t_gemm, t_comm)
// (1: the shorter one hid entirely behind the longer; 0: they ran one after
// the other). The figure means most when t_gemm and t_comm are close, so by
// default (gemms=0) the GEMM loop is sized from the warm-up to last about as
// long as the allreduce loop. The ranks' streams have the greatest priority,
// as frameworks give their communication streams, so that the ring's CTAs
// are scheduled ahead of the GEMM's waiting ones.
//
// It measures twice: the GEMMs on every SM, then on all but `margin` SMs
// (cublasSetSmCountTarget), as frameworks that overlap GEMMs with NCCL do
// (an "SM margin" for the communication kernels). Why it matters: a GEMM
// kernel sized to the whole GPU (one wave of CTAs, or persistent CTAs) that
// finds some SMs held by the ring runs its last CTAs after the ring's leave,
// so a ring on a few SMs can cost the GEMM a whole extra wave. The default
// margin is the ring's CTAs for these allreduces, summed over the ranks
// (weftCommGpuCtas: what the ring launches, at most WEFT_MAX_CTAS each).
//   usage: gpu_overlap_perf [allreduce bytes=64M] [gemm n=8192] [gemms=0: auto]
//                           [allreduces=10] [ranks=2] [margin SMs=-1: ring's CTAs]
// Without a GPU it prints "SKIPPED: no GPU" and exits 0.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gpu/gpu_harness.h"

namespace {

[[noreturn]] void die(const std::string& what) {
  std::printf("error: %s\n", what.c_str());
  std::exit(1);
}

void cudaOk(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(rc));
}

// Wall-clock seconds of `enqueue` followed by a synchronisation of the device.
double timed(const std::function<void()>& enqueue) {
  cudaOk(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto t0 = std::chrono::steady_clock::now();
  enqueue();
  cudaOk(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a stop by a timeout keeps what was printed
  const std::string why = gpu_test::whyNoGpu();
  if (!why.empty()) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 0;
  }
  const size_t bytes = argc > 1 ? gpu_test::parseBytes(argv[1]) : size_t{64} << 20;
  const int n = argc > 2 ? std::atoi(argv[2]) : 8192;
  const int gemmsArg = argc > 3 ? std::atoi(argv[3]) : 0;
  const int allreduces = argc > 4 ? std::atoi(argv[4]) : 10;
  const int ranks = argc > 5 ? std::atoi(argv[5]) : 2;
  int margin = argc > 6 ? std::atoi(argv[6]) : -1;
  if (n < 1 || gemmsArg < 0 || allreduces < 1 || ranks < 2 || bytes < sizeof(float) || margin < -1)
    die("usage: gpu_overlap_perf [bytes] [gemm n] [gemms, 0: auto] [allreduces] [ranks >= 2] "
        "[margin SMs, -1: the ring's CTAs]");
  // CUDA is loaded and the GPU selected before the communicators exist, so
  // that they set up the GPU ring (as an NCCL communicator needs its device).
  cudaOk(cudaSetDevice(0), "cudaSetDevice");
  cudaOk(cudaFree(nullptr), "creating the CUDA context");

  std::vector<weftComm_t> comms(ranks);
  if (weftCommInitAll(comms.data(), ranks, nullptr) != weftSuccess)
    die(std::string("weftCommInitAll: ") + weftGetLastError(nullptr));
  const size_t count = bytes / sizeof(float);
  std::vector<cudaStream_t> commStreams(ranks);
  std::vector<float*> bufs(ranks);
  int leastPriority = 0, greatestPriority = 0;
  cudaOk(cudaDeviceGetStreamPriorityRange(&leastPriority, &greatestPriority), "priority range");
  for (int r = 0; r < ranks; ++r) {
    cudaOk(cudaStreamCreateWithPriority(&commStreams[r], cudaStreamNonBlocking, greatestPriority),
           "stream");
    cudaOk(cudaMalloc(&bufs[r], count * sizeof(float)), "allreduce buffer");
    cudaOk(cudaMemset(bufs[r], 0, count * sizeof(float)), "cudaMemset");
  }

  cudaStream_t gemmStream;
  cudaOk(cudaStreamCreateWithFlags(&gemmStream, cudaStreamNonBlocking), "stream");
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) die("cublasCreate failed");
  cublasSetStream(blas, gemmStream);
  const size_t elems = static_cast<size_t>(n) * n;
  __half *a, *b, *c;
  cudaOk(cudaMalloc(&a, elems * sizeof(__half)), "GEMM A");
  cudaOk(cudaMalloc(&b, elems * sizeof(__half)), "GEMM B");
  cudaOk(cudaMalloc(&c, elems * sizeof(__half)), "GEMM C");
  cudaOk(cudaMemset(a, 0, elems * sizeof(__half)), "cudaMemset");
  cudaOk(cudaMemset(b, 0, elems * sizeof(__half)), "cudaMemset");
  const float one = 1.0f, zero = 0.0f;

  int gemms = gemmsArg > 0 ? gemmsArg : 1;  // sized in measure() when 0
  auto gemmLoop = [&]() {
    for (int i = 0; i < gemms; ++i)
      if (cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16F, n, b,
                       CUDA_R_16F, n, &zero, c, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        die("cublasGemmEx failed");
  };
  auto commLoop = [&]() {
    for (int i = 0; i < allreduces; ++i)
      for (int r = 0; r < ranks; ++r)  // one thread drives every rank: the calls do not wait
        if (weftAllReduce(bufs[r], bufs[r], count, weftFloat32, weftSum, comms[r],
                          commStreams[r]) != weftSuccess)
          die(std::string("weftAllReduce: ") + weftGetLastError(comms[r]));
  };

  // Each phase names itself as it starts, so a stop by a timeout says where.
  std::printf("# warm-up: GEMMs\n");
  timed(gemmLoop);  // warm-up: cuBLAS heuristics, the ring's first calls
  std::printf("# warm-up: allreduces\n");
  const double warmComm = timed(commLoop);

  int sms = 0;
  cudaOk(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  if (margin < 0) {
    margin = 0;
    for (int r = 0; r < ranks; ++r) {
      int ctas = 0;
      if (weftCommGpuCtas(comms[r], count, weftFloat32, &ctas) != weftSuccess)
        die(std::string("weftCommGpuCtas: ") + weftGetLastError(comms[r]));
      margin += ctas;
    }
    std::printf("# the ring's CTAs for these allreduces, all ranks: %d (weftCommGpuCtas)\n",
                margin);
  }
  margin = std::min(margin, sms / 2);  // the GEMMs keep at least half the GPU

  // One measurement with the GEMMs on `gemmSms` SMs (0: all): the best of
  // three rounds of GEMMs alone, allreduces alone, and both.
  auto measure = [&](int gemmSms) {
    if (cublasSetSmCountTarget(blas, gemmSms) != CUBLAS_STATUS_SUCCESS)
      die("cublasSetSmCountTarget failed");
    const int used = gemmSms > 0 ? gemmSms : sms;
    std::printf("# GEMMs on %d of %d SMs\n", used, sms);
    if (gemmsArg == 0) {  // as many GEMMs as take about as long as the allreduces
      gemms = 1;
      timed(gemmLoop);  // warm-up at this SM count
      const double oneGemm = timed(gemmLoop);
      gemms = static_cast<int>(std::min(2000.0, std::max(1.0, warmComm / oneGemm + 0.5)));
      std::printf("# sized: one GEMM %.3f ms, allreduces %.3f ms: %d GEMMs per loop\n",
                  oneGemm * 1e3, warmComm * 1e3, gemms);
    }
    std::printf("# timing: 3 rounds of GEMMs alone, allreduces alone, both\n");
    double tGemm = 1e30, tComm = 1e30, tBoth = 1e30;
    for (int round = 0; round < 3; ++round) {  // best of three of each
      tGemm = std::min(tGemm, timed(gemmLoop));
      tComm = std::min(tComm, timed(commLoop));
      tBoth = std::min(tBoth, timed([&]() {
                         gemmLoop();
                         commLoop();
                       }));
    }
    for (int r = 0; r < ranks; ++r) {
      weftResult_t async = weftSuccess;
      weftCommGetAsyncError(comms[r], &async);
      if (async != weftSuccess) die(std::string("async error: ") + weftGetLastError(comms[r]));
    }
    const double gemmTflops = 2.0 * n * n * static_cast<double>(n) * gemms / tGemm / 1e12;
    const double busbw = 2.0 * (ranks - 1) / ranks * bytes * allreduces / tComm / 1e9;
    const double efficiency = (tGemm + tComm - tBoth) / std::min(tGemm, tComm);
    std::printf("gemm   %d x %dx%d fp16 on %d of %d SMs: %.3f ms (%.1f TFLOP/s)\n", gemms, n, n,
                used, sms, tGemm * 1e3, gemmTflops);
    std::printf("allreduce %d x %zu bytes, %d ranks: %.3f ms (busbw %.1f GB/s)\n", allreduces,
                bytes, ranks, tComm * 1e3, busbw);
    std::printf("both: %.3f ms\n", tBoth * 1e3);
    std::printf("overlap efficiency %.2f with the GEMMs on %d of %d SMs (target 0.70)\n",
                efficiency, used, sms);
  };
  measure(0);
  if (margin > 0) measure(sms - margin);

  cublasDestroy(blas);
  for (int r = 0; r < ranks; ++r) {
    weftCommDestroy(comms[r]);
    cudaFree(bufs[r]);
    cudaStreamDestroy(commStreams[r]);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
