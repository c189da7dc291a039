// The CUDA stream path of weft.h on a real GPU: two ranks of one process
// (weftCommInitAll) sharing the GPU, each with its own cudaStream_t, run
// allreduce (and allgather, reduce-scatter, broadcast, reduce) on cudaMalloc
// buffers for every datatype and op and check the results against the exact
// references of tests/mp/mp_values.h; then a pinned-buffer call, several
// calls in flight, and the refusal of device
// memory on the host path. One thread drives both ranks: calls on a stream
// return without waiting, so it needs no group. Where no GPU is visible every
// test says "SKIPPED: no GPU".
//
// The inputs are written with cudaMemcpy from pageable memory, which may
// return before its copy lands, on the legacy stream, which the ranks'
// non-blocking streams do not wait for: so each case synchronises the device
// before its calls (without that, the calls read the buffers before the
// inputs arrived, as a first GPU run showed: every result 0). Each case names
// itself on stderr before its calls, so a hang in a log says where it is.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/comm.h"
#include "gpu_harness.h"
#include "mp/mp_values.h"

namespace {

constexpr int kRanks = 2;

class GpuStream : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = gpu_test::whyNoGpu();
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: " << why;
    // The GPU first, as an application selects it before creating its
    // communicators: weft does not load CUDA for a process that has not
    // (whyNoRing), so without this every call was host-staged and the GPU
    // ring's run of these tests did not run the ring.
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
    const char* ring = std::getenv("WEFT_GPU_RING");
    const bool wantRing = ring == nullptr || std::string(ring) != "0";
    for (weftComm_t c : comms_) {
      if (wantRing) {
        ASSERT_EQ(c->peerRing.state, weft::GpuPeerRing::State::kOn)
            << "2 ranks of one process on one GPU must get the GPU ring: " << c->peerRing.offWhy;
      } else {
        ASSERT_NE(c->peerRing.state, weft::GpuPeerRing::State::kOn) << "WEFT_GPU_RING=0 must stage";
      }
    }
    for (auto& s : streams_)
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    for (auto& s : streams_)
      if (s != nullptr) cudaStreamDestroy(s);
    for (auto& c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(weftCommDestroy(c), weftSuccess) << weftGetLastError(nullptr);
      }
    }
  }
  // Allreduce of `count` elements on both ranks; "" or the first mismatch.
  std::string allReduce(weftDataType_t dt, weftRedOp_t op, size_t count, bool inPlace) {
    const size_t b = count * mp::dtSize(dt);
    void* send[kRanks] = {};
    void* recv[kRanks] = {};
    std::vector<std::vector<unsigned char>> in(kRanks, std::vector<unsigned char>(b));
    std::vector<unsigned char> want(b), got(b);
    std::string err;
    for (int r = 0; r < kRanks; ++r) {
      cudaMalloc(&send[r], b);
      recv[r] = send[r];
      if (!inPlace) cudaMalloc(&recv[r], b);
      mp::fillReduceInput(dt, op, r, 0, count, in[r].data());
      cudaMemcpy(send[r], in[r].data(), b, cudaMemcpyHostToDevice);
    }
    inputsLanded("allreduce", dt, op, count);
    for (int r = 0; r < kRanks && err.empty(); ++r) err = landed(send[r], in[r].data(), b);
    for (int r = 0; r < kRanks && err.empty(); ++r)
      if (weftAllReduce(send[r], recv[r], count, dt, op, comms_[r], streams_[r]) != weftSuccess)
        err = std::string("weftAllReduce: ") + weftGetLastError(nullptr);
    mp::fillReduceExpected(dt, op, kRanks, 0, count, want.data());
    for (int r = 0; r < kRanks; ++r) {
      cudaStreamSynchronize(streams_[r]);
      cudaMemcpy(got.data(), recv[r], b, cudaMemcpyDeviceToHost);
      if (err.empty()) err = mp::compareElems(dt, got.data(), want.data(), count);
      cudaFree(send[r]);
      if (!inPlace) cudaFree(recv[r]);
    }
    weftResult_t async = weftSuccess;
    weftCommGetAsyncError(comms_[0], &async);
    if (err.empty() && async != weftSuccess) err = "async error set";
    return err;
  }
  // Reduce-scatter of `count` elements per rank (or, with gather, an
  // allgather of `count` per rank) on both ranks; "" or the first mismatch.
  std::string blocks(bool gather, weftDataType_t dt, weftRedOp_t op, size_t count) {
    const size_t b = count * mp::dtSize(dt), all = b * kRanks;
    void* send[kRanks] = {};
    void* recv[kRanks] = {};
    std::vector<std::vector<unsigned char>> in(kRanks, std::vector<unsigned char>(all));
    std::vector<unsigned char> want(all), got(all);
    std::string err;
    for (int r = 0; r < kRanks; ++r) {
      cudaMalloc(&send[r], gather ? b : all);
      cudaMalloc(&recv[r], gather ? all : b);
      if (gather) {
        mp::fillPattern(&want[r * b], b, mp::seedOf(r, count, 3));
        std::memcpy(in[r].data(), &want[r * b], b);
      } else {
        mp::fillReduceInput(dt, op, r, 0, count * kRanks, in[r].data());
      }
      cudaMemcpy(send[r], in[r].data(), gather ? b : all, cudaMemcpyHostToDevice);
    }
    inputsLanded(gather ? "allgather" : "reduce-scatter", dt, op, count);
    for (int r = 0; r < kRanks && err.empty(); ++r)
      err = landed(send[r], in[r].data(), gather ? b : all);
    for (int r = 0; r < kRanks && err.empty(); ++r) {
      const weftResult_t rc =
          gather ? weftAllGather(send[r], recv[r], count, dt, comms_[r], streams_[r])
                 : weftReduceScatter(send[r], recv[r], count, dt, op, comms_[r], streams_[r]);
      if (rc != weftSuccess) err = std::string("call: ") + weftGetLastError(nullptr);
    }
    for (int r = 0; r < kRanks; ++r) {
      cudaStreamSynchronize(streams_[r]);
      if (gather) {
        cudaMemcpy(got.data(), recv[r], all, cudaMemcpyDeviceToHost);
        if (err.empty()) err = mp::compareElems(weftUint8, got.data(), want.data(), all);
      } else {
        mp::fillReduceExpected(dt, op, kRanks, count * r, count, want.data());
        cudaMemcpy(got.data(), recv[r], b, cudaMemcpyDeviceToHost);
        if (err.empty()) err = mp::compareElems(dt, got.data(), want.data(), count);
      }
      cudaFree(send[r]);
      cudaFree(recv[r]);
    }
    weftResult_t async = weftSuccess;
    weftCommGetAsyncError(comms_[0], &async);
    if (err.empty() && async != weftSuccess) err = "async error set";
    return err;
  }
  // "" when the GPU holds `bytes` of `host` at `dev` (read back after
  // inputsLanded): a wrong result then comes from the calls, not the upload.
  static std::string landed(const void* dev, const void* host, size_t bytes) {
    std::vector<unsigned char> back(bytes);
    if (cudaMemcpy(back.data(), dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
      return "reading an input back failed";
    if (std::memcmp(back.data(), host, bytes) != 0)
      return "an input read back from the GPU differs from what the test wrote (the upload, "
             "not weft)";
    return "";
  }
  // The legacy stream's copies (the inputs) are done before the ranks'
  // streams read the buffers; and the case is named where a hang shows.
  static void inputsLanded(const char* what, weftDataType_t dt, weftRedOp_t op, size_t count) {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::fprintf(stderr, "case: %s %s op %d x%zu\n", what, mp::dtName(dt), static_cast<int>(op),
                 count);
  }
  weftComm_t comms_[kRanks] = {};
  cudaStream_t streams_[kRanks] = {};
};

TEST_F(GpuStream, AllReduceEveryTypeAndOp) {
  for (weftDataType_t dt : mp::kAllTypes) {
    if (!mp::dtReducible(dt)) continue;
    for (weftRedOp_t op : mp::kAllOps) {
      if (!mp::opApplies(dt, op)) continue;
      for (size_t count : {size_t{1}, size_t{1031}, size_t{(1 << 20) + 3}})
        for (bool inPlace : {false, true}) {
          std::string err = allReduce(dt, op, count, inPlace);
          EXPECT_EQ(err, "") << mp::dtName(dt) << " op " << op << " x" << count
                             << (inPlace ? " in place" : "");
        }
    }
  }
}

TEST_F(GpuStream, AllGatherAndReduceScatterEveryType) {
  for (weftDataType_t dt : mp::kAllTypes) {
    for (size_t count : {size_t{1}, size_t{1031}, size_t{(1 << 20) + 3}}) {
      EXPECT_EQ(blocks(true, dt, weftSum, count), "")
          << "allgather " << mp::dtName(dt) << " x" << count;
      if (!mp::dtReducible(dt)) continue;
      for (weftRedOp_t op : mp::kAllOps) {
        if (!mp::opApplies(dt, op)) continue;
        EXPECT_EQ(blocks(false, dt, op, count), "")
            << "reduce-scatter " << mp::dtName(dt) << " op " << op << " x" << count;
      }
    }
  }
}

// Broadcast from rank 1 and reduce to rank 1 of every datatype (sum).
TEST_F(GpuStream, BroadcastAndReduceEveryType) {
  const int root = 1;
  for (weftDataType_t dt : mp::kAllTypes) {
    for (size_t count : {size_t{1}, size_t{1031}, size_t{(1 << 20) + 3}}) {
      const size_t b = count * mp::dtSize(dt);
      std::vector<unsigned char> data(b), want(b), got(b);
      std::vector<std::vector<unsigned char>> in(kRanks, std::vector<unsigned char>(b));
      mp::fillPattern(data.data(), b, mp::seedOf(root, count, 5));
      const bool reducible = mp::dtReducible(dt);
      if (reducible) mp::fillReduceExpected(dt, weftSum, kRanks, 0, count, want.data());
      void* bcast[kRanks] = {};
      void* send[kRanks] = {};
      void* recv[kRanks] = {};
      for (int r = 0; r < kRanks; ++r) {
        cudaMalloc(&bcast[r], b);
        cudaMalloc(&send[r], b);
        cudaMalloc(&recv[r], b);
        if (r == root) cudaMemcpy(bcast[r], data.data(), b, cudaMemcpyHostToDevice);
        mp::fillReduceInput(dt, weftSum, r, 0, count, in[r].data());
        cudaMemcpy(send[r], in[r].data(), b, cudaMemcpyHostToDevice);
      }
      inputsLanded("broadcast and reduce", dt, weftSum, count);
      ASSERT_EQ(landed(bcast[root], data.data(), b), "");
      for (int r = 0; r < kRanks; ++r) ASSERT_EQ(landed(send[r], in[r].data(), b), "");
      for (int r = 0; r < kRanks; ++r) {
        EXPECT_EQ(weftBroadcast(bcast[r], bcast[r], count, dt, root, comms_[r], streams_[r]),
                  weftSuccess)
            << weftGetLastError(nullptr);
        if (reducible) {
          EXPECT_EQ(weftReduce(send[r], recv[r], count, dt, weftSum, root, comms_[r], streams_[r]),
                    weftSuccess)
              << weftGetLastError(nullptr);
        }
      }
      for (int r = 0; r < kRanks; ++r) {
        cudaStreamSynchronize(streams_[r]);
        cudaMemcpy(got.data(), bcast[r], b, cudaMemcpyDeviceToHost);
        EXPECT_EQ(mp::compareElems(weftUint8, got.data(), data.data(), b), "")
            << "broadcast " << mp::dtName(dt) << " x" << count << " on rank " << r;
        if (reducible && r == root) {
          cudaMemcpy(got.data(), recv[r], b, cudaMemcpyDeviceToHost);
          EXPECT_EQ(mp::compareElems(dt, got.data(), want.data(), count), "")
              << "reduce " << mp::dtName(dt) << " x" << count;
        }
        cudaFree(bcast[r]);
        cudaFree(send[r]);
        cudaFree(recv[r]);
      }
    }
  }
}

TEST_F(GpuStream, PinnedBuffersAndCallsInFlight) {
  const size_t count = 100003, b = count * 4;
  std::vector<int32_t*> pinned(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    cudaHostAlloc(reinterpret_cast<void**>(&pinned[r]), b, cudaHostAllocDefault);
    for (size_t i = 0; i < count; ++i) pinned[r][i] = static_cast<int32_t>(i % 100) + r;
  }
  for (int k = 0; k < 8; ++k)  // 8 in-place sums in flight: x -> 2^8-scaled sum
    for (int r = 0; r < kRanks; ++r)
      ASSERT_EQ(
          weftAllReduce(pinned[r], pinned[r], count, weftInt32, weftSum, comms_[r], streams_[r]),
          weftSuccess)
          << weftGetLastError(nullptr);
  for (int r = 0; r < kRanks; ++r) cudaStreamSynchronize(streams_[r]);
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < count; i += 997)
      ASSERT_EQ(pinned[r][i], (2 * static_cast<int32_t>(i % 100) + 1) << 7) << "element " << i;
  for (int r = 0; r < kRanks; ++r) cudaFreeHost(pinned[r]);
}

TEST_F(GpuStream, DeviceMemoryOnTheHostPathIsRefused) {
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 4096), cudaSuccess);
  std::vector<float> host(1024);
  EXPECT_EQ(weftAllReduce(dev, host.data(), 16, weftFloat, weftSum, comms_[0], nullptr),
            weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("sendbuff="), std::string::npos)
      << weftGetLastError(nullptr);
  cudaFree(dev);
}

}  // namespace
