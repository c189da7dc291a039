// GPU tests of the CUDA kernels: every datatype and op of the reduce kernel
// against the host reference, and the data-movement kernel's ring allreduce
// with 2..8 ranks on one GPU. Where no GPU is visible every test says
// "SKIPPED: no GPU" (gtest's skip) instead of passing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "collectives/kernels/cuda_kernels.h"
#include "gpu_harness.h"
#include "reduce/inputs.h"
#include "reduce/reference.h"

namespace {

size_t sizeOf(weftDataType_t t) { return reduce_test::elementSize(t); }

// Finite values in a small range, so products and sums stay meaningful in
// every type (the host reduce tests cover NaN/Inf/subnormal semantics).
std::vector<uint8_t> finiteInputs(weftDataType_t t, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n * sizeOf(t));
  for (size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>(rng() % 9) - 4;
    const double f = v + (rng() % 4) * 0.25;
    uint8_t* p = out.data() + i * sizeOf(t);
    switch (t) {
      case weftInt8: {
        int8_t x = static_cast<int8_t>(v);
        std::memcpy(p, &x, 1);
        break;
      }
      case weftUint8: {
        uint8_t x = static_cast<uint8_t>(v + 4);
        std::memcpy(p, &x, 1);
        break;
      }
      case weftInt32: {
        int32_t x = v;
        std::memcpy(p, &x, 4);
        break;
      }
      case weftUint32: {
        uint32_t x = static_cast<uint32_t>(v + 4);
        std::memcpy(p, &x, 4);
        break;
      }
      case weftInt64: {
        int64_t x = v;
        std::memcpy(p, &x, 8);
        break;
      }
      case weftUint64: {
        uint64_t x = static_cast<uint64_t>(v + 4);
        std::memcpy(p, &x, 8);
        break;
      }
      case weftFloat16: {
        uint16_t x = reduce_ref::encodeHalf(static_cast<float>(f));
        std::memcpy(p, &x, 2);
        break;
      }
      case weftBfloat16: {
        uint16_t x = reduce_ref::encodeBf16(static_cast<float>(f));
        std::memcpy(p, &x, 2);
        break;
      }
      case weftFloat32: {
        float x = static_cast<float>(f);
        std::memcpy(p, &x, 4);
        break;
      }
      default: {
        std::memcpy(p, &f, 8);
        break;
      }
    }
  }
  return out;
}

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = gpu_test::whyNoGpu();
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: " << why;
  }
};

TEST_F(Gpu, ReduceKernelMatchesHostReferenceForEveryTypeAndOp) {
  const size_t n = 100003;
  for (int t = 0; t < weftNumTypes; ++t) {
    for (int o = 0; o < weftNumOps; ++o) {
      const auto type = static_cast<weftDataType_t>(t);
      const auto op = static_cast<weftRedOp_t>(o);
      if (!reduce_ref::applies(type, op)) continue;  // a bitwise op on a float type
      const size_t bytes = n * sizeOf(type);
      auto a = finiteInputs(type, n, 11 * t + o);
      auto b = finiteInputs(type, n, 13 * t + o + 1);
      std::vector<uint8_t> want(bytes), got(bytes);
      reduce_ref::combine(type, op, a.data(), b.data(), want.data(), n);
      if (op == weftAvg) reduce_ref::divide(type, want.data(), n, 2);
      void *da, *db, *dd;
      ASSERT_EQ(cudaSuccess, cudaMalloc(&da, bytes));
      ASSERT_EQ(cudaSuccess, cudaMalloc(&db, bytes));
      ASSERT_EQ(cudaSuccess, cudaMalloc(&dd, bytes));
      cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
      cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
      const void* srcs[2] = {da, db};
      ASSERT_EQ(0, weft::cuda::reduce(type, op, dd, srcs, 2, n, nullptr));
      ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
      cudaMemcpy(got.data(), dd, bytes, cudaMemcpyDeviceToHost);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), bytes)) << "type " << t << " op " << o;
      cudaFree(da);
      cudaFree(db);
      cudaFree(dd);
    }
  }
}

// Every rank's inputs are small integers (exact in every type), so the ring's
// order of operations cannot change the result.
TEST_F(Gpu, RingAllreduceKernelOnOneGpu) {
  for (int nranks : {2, 3, 4, 8}) {
    for (weftDataType_t type : {weftFloat32, weftFloat16, weftBfloat16, weftInt32, weftFloat64}) {
      const size_t n = 1000003;
      const size_t bytes = n * sizeOf(type);
      std::vector<std::vector<uint8_t>> in(nranks);
      std::vector<void*> din(nranks), dout(nranks);
      for (int r = 0; r < nranks; ++r) {
        in[r] = finiteInputs(type == weftFloat32 || type == weftFloat64 ? weftInt32 : type, n, r);
        if (type == weftFloat32 || type == weftFloat64) {  // small integers as floats
          std::vector<uint8_t> f(bytes);
          for (size_t i = 0; i < n; ++i) {
            int32_t v;
            std::memcpy(&v, in[r].data() + 4 * i, 4);
            if (type == weftFloat32) {
              float x = static_cast<float>(v);
              std::memcpy(f.data() + 4 * i, &x, 4);
            } else {
              double x = v;
              std::memcpy(f.data() + 8 * i, &x, 8);
            }
          }
          in[r] = f;
        }
        cudaMalloc(&din[r], bytes);
        cudaMalloc(&dout[r], bytes);
        cudaMemcpy(din[r], in[r].data(), bytes, cudaMemcpyHostToDevice);
      }
      std::vector<uint8_t> want = in[0];
      for (int r = 1; r < nranks; ++r)
        reduce_ref::combine(type, weftSum, want.data(), in[r].data(), want.data(), n);
      gpu_test::LocalRing ring(nranks, 4, 64 << 10);
      ASSERT_EQ(0, weft::cuda::ringAllreduceLocal(type, weftSum, din.data(), dout.data(), n, nranks,
                                                  ring.deviceLinks(), 512, 0, nullptr));
      auto start = std::chrono::steady_clock::now();
      while (cudaStreamQuery(nullptr) == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
          ring.raiseAbort();  // a hang becomes a failure, not a stuck test
          cudaDeviceSynchronize();
          FAIL() << "ring kernel did not finish in 20 s (nranks " << nranks << ")";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
      std::vector<uint8_t> got(bytes);
      for (int r = 0; r < nranks; ++r) {
        cudaMemcpy(got.data(), dout[r], bytes, cudaMemcpyDeviceToHost);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), bytes))
            << "rank " << r << " of " << nranks << ", type " << type;
        cudaFree(din[r]);
        cudaFree(dout[r]);
      }
    }
  }
}

}  // namespace
