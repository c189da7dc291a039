// The GPU ring with the fake CUDA (fake_runtime.h), driven the way
// tests/gpu/gpu_stream_coll_test.cc drives it on a GPU: two ranks of one
// process (weftCommInitAll), one thread enqueuing both ranks' calls on their
// own streams without waiting in between, then synchronising both streams.
// Every datatype and op of allreduce (ring ops on the ring, avg staged),
// allgather, reduce-scatter, broadcast and reduce, in and out of place, at
// sizes of one element, a few pieces and many pieces per CTA; and a fresh
// pair of communicators per test, as the GPU test's fixture makes them. A
// stop here (a call that never ends) fails within WEFT_TIMEOUT instead.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/algo_table.h"
#include "core/comm.h"
#include "device/fake_runtime.h"
#include "mp/mp_values.h"

namespace {

namespace fake = weft::fake;
constexpr int kRanks = 2;
const size_t kCounts[] = {1, 1031, (size_t{1} << 16) + 3};

class StreamRingOneThread : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_TIMEOUT", "20", 1);
    weft::setDeviceRuntimeForTesting(fake::runtime());
    ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_EQ(comms_[r]->peerRing.state, weft::GpuPeerRing::State::kOn)
          << comms_[r]->peerRing.offWhy;
      streams_[r] = fake::streamCreate();
    }
  }
  void TearDown() override {
    for (int r = 0; r < kRanks; ++r) {
      if (streams_[r] != nullptr) fake::streamSync(streams_[r]);
      if (comms_[r] != nullptr) {
        EXPECT_EQ(weftCommDestroy(comms_[r]), weftSuccess) << weftGetLastError(nullptr);
      }
      if (streams_[r] != nullptr) fake::streamDestroy(streams_[r]);
    }
    weft::setDeviceRuntimeForTesting(nullptr);
    unsetenv("WEFT_TIMEOUT");
  }
  static void* upload(const void* host, size_t bytes) {
    void* p = fake::deviceAlloc(bytes == 0 ? 1 : bytes);
    fake::copyToDevice(p, host, bytes);
    return p;
  }
  static std::vector<unsigned char> download(const void* dev, size_t bytes) {
    std::vector<unsigned char> out(bytes);
    fake::copyFromDevice(out.data(), dev, bytes);
    return out;
  }
  // "" or what went wrong: the calls' errors, then the async ones.
  std::string syncAndAsync(std::string err) {
    for (int r = 0; r < kRanks; ++r) {
      fake::streamSync(streams_[r]);
      weftResult_t async = weftSuccess;
      weftCommGetAsyncError(comms_[r], &async);
      if (err.empty() && async != weftSuccess)
        err = "rank " + std::to_string(r) + ": async error " + std::to_string(async);
    }
    return err;
  }

  std::string allReduce(weftDataType_t dt, weftRedOp_t op, size_t count, bool inPlace) {
    const size_t b = count * mp::dtSize(dt);
    std::vector<unsigned char> in(b), want(b);
    void* send[kRanks] = {};
    void* recv[kRanks] = {};
    for (int r = 0; r < kRanks; ++r) {
      mp::fillReduceInput(dt, op, r, 0, count, in.data());
      send[r] = upload(in.data(), b);
      recv[r] = inPlace ? send[r] : fake::deviceAlloc(b);
    }
    std::string err;
    for (int r = 0; r < kRanks && err.empty(); ++r)
      if (weftAllReduce(send[r], recv[r], count, dt, op, comms_[r], streams_[r]) != weftSuccess)
        err = std::string("weftAllReduce: ") + weftGetLastError(nullptr);
    err = syncAndAsync(err);
    mp::fillReduceExpected(dt, op, kRanks, 0, count, want.data());
    for (int r = 0; r < kRanks; ++r) {
      if (err.empty()) err = mp::compareElems(dt, download(recv[r], b).data(), want.data(), count);
      fake::memFree(send[r]);
      if (!inPlace) fake::memFree(recv[r]);
    }
    return err;
  }

  // An allgather (gather) or a reduce-scatter of `count` elements per rank.
  std::string blocks(bool gather, weftDataType_t dt, weftRedOp_t op, size_t count) {
    const size_t b = count * mp::dtSize(dt), all = b * kRanks;
    std::vector<unsigned char> in(all), want(all);
    void* send[kRanks] = {};
    void* recv[kRanks] = {};
    for (int r = 0; r < kRanks; ++r) {
      if (gather) {
        mp::fillPattern(&want[r * b], b, mp::seedOf(r, count, 3));
        send[r] = upload(&want[r * b], b);
      } else {
        mp::fillReduceInput(dt, op, r, 0, count * kRanks, in.data());
        send[r] = upload(in.data(), all);
      }
      recv[r] = fake::deviceAlloc(gather ? all : b);
    }
    std::string err;
    for (int r = 0; r < kRanks && err.empty(); ++r) {
      const weftResult_t rc =
          gather ? weftAllGather(send[r], recv[r], count, dt, comms_[r], streams_[r])
                 : weftReduceScatter(send[r], recv[r], count, dt, op, comms_[r], streams_[r]);
      if (rc != weftSuccess) err = std::string("call: ") + weftGetLastError(nullptr);
    }
    err = syncAndAsync(err);
    for (int r = 0; r < kRanks; ++r) {
      if (err.empty() && gather) {
        err = mp::compareElems(weftUint8, download(recv[r], all).data(), want.data(), all);
      } else if (err.empty()) {
        mp::fillReduceExpected(dt, op, kRanks, count * r, count, want.data());
        err = mp::compareElems(dt, download(recv[r], b).data(), want.data(), count);
      }
      fake::memFree(send[r]);
      fake::memFree(recv[r]);
    }
    return err;
  }

  weftComm_t comms_[kRanks] = {};
  void* streams_[kRanks] = {};
};

TEST_F(StreamRingOneThread, AllReduceEveryTypeAndOp) {
  for (weftDataType_t dt : mp::kAllTypes) {
    if (!mp::dtReducible(dt)) continue;
    for (weftRedOp_t op : mp::kAllOps) {
      if (!mp::opApplies(dt, op)) continue;
      for (size_t count : kCounts)
        for (bool inPlace : {false, true})
          ASSERT_EQ(allReduce(dt, op, count, inPlace), "")
              << mp::dtName(dt) << " op " << op << " x" << count << (inPlace ? " in place" : "");
    }
  }
}

TEST_F(StreamRingOneThread, AllGatherAndReduceScatterEveryType) {
  for (weftDataType_t dt : mp::kAllTypes)
    for (size_t count : kCounts) {
      ASSERT_EQ(blocks(true, dt, weftSum, count), "")
          << "allgather " << mp::dtName(dt) << " x" << count;
      if (!mp::dtReducible(dt)) continue;
      for (weftRedOp_t op : mp::kAllOps) {
        if (!mp::opApplies(dt, op)) continue;
        ASSERT_EQ(blocks(false, dt, op, count), "")
            << "reduce-scatter " << mp::dtName(dt) << " op " << op << " x" << count;
      }
    }
}

// Broadcast from rank 1 in place, and reduce (sum) to rank 1.
TEST_F(StreamRingOneThread, BroadcastAndReduceEveryType) {
  const int root = 1;
  for (weftDataType_t dt : mp::kAllTypes)
    for (size_t count : kCounts) {
      const size_t b = count * mp::dtSize(dt);
      const bool reducible = mp::dtReducible(dt);
      std::vector<unsigned char> data(b), zeros(b), in(b), want(b);
      mp::fillPattern(data.data(), b, mp::seedOf(root, count, 5));
      if (reducible) mp::fillReduceExpected(dt, weftSum, kRanks, 0, count, want.data());
      void* bcast[kRanks] = {};
      void* send[kRanks] = {};
      void* recv[kRanks] = {};
      std::string err;
      for (int r = 0; r < kRanks; ++r) {
        bcast[r] = upload(r == root ? data.data() : zeros.data(), b);
        mp::fillReduceInput(dt, weftSum, r, 0, count, in.data());
        send[r] = upload(in.data(), b);
        recv[r] = fake::deviceAlloc(b);
      }
      for (int r = 0; r < kRanks && err.empty(); ++r) {
        if (weftBroadcast(bcast[r], bcast[r], count, dt, root, comms_[r], streams_[r]) !=
                weftSuccess ||
            (reducible && weftReduce(send[r], recv[r], count, dt, weftSum, root, comms_[r],
                                     streams_[r]) != weftSuccess))
          err = std::string("call: ") + weftGetLastError(nullptr);
      }
      err = syncAndAsync(err);
      for (int r = 0; r < kRanks; ++r) {
        if (err.empty())
          err = mp::compareElems(weftUint8, download(bcast[r], b).data(), data.data(), b);
        if (err.empty() && reducible && r == root)
          err = mp::compareElems(dt, download(recv[r], b).data(), want.data(), count);
        fake::memFree(bcast[r]);
        fake::memFree(send[r]);
        fake::memFree(recv[r]);
      }
      ASSERT_EQ(err, "") << mp::dtName(dt) << " x" << count;
    }
}

// weftRedOpCreatePreMulSum with the scalar in device memory: the call reads
// it in stream order, after a copy enqueued before it on the same stream (the
// scalar is 0 on the device until then), and a host call cannot read it.
TEST_F(StreamRingOneThread, PreMulSumReadsDeviceScalarInStreamOrder) {
  const size_t count = 1031;
  std::vector<float> in[kRanks], want(count, 0.0f);
  void* buf[kRanks] = {};
  void* scalarOnDevice[kRanks] = {};
  float scalar[kRanks] = {2.0f, 0.25f};
  weftRedOp_t op[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    in[r].resize(count);
    for (size_t i = 0; i < count; ++i) in[r][i] = static_cast<float>((i * 7 + r * 13) % 41) - 20;
    for (size_t i = 0; i < count; ++i) want[i] += scalar[r] * in[r][i];
    buf[r] = upload(in[r].data(), count * sizeof(float));
    const float zero = 0.0f;
    scalarOnDevice[r] = upload(&zero, sizeof zero);
    ASSERT_EQ(weftRedOpCreatePreMulSum(&op[r], scalarOnDevice[r], weftFloat32, weftScalarDevice,
                                       comms_[r]),
              weftSuccess)
        << weftGetLastError(comms_[r]);
  }
  float host = 1.0f;
  EXPECT_EQ(weftAllReduce(&host, &host, 1, weftFloat32, op[0], comms_[0], nullptr),
            weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(comms_[0])).find("device memory"), std::string::npos)
      << weftGetLastError(comms_[0]);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(
        weft::deviceRuntime()->copyAsync(scalarOnDevice[r], &scalar[r], sizeof(float), streams_[r]),
        weftSuccess);
    ASSERT_EQ(weftAllReduce(buf[r], buf[r], count, weftFloat32, op[r], comms_[r], streams_[r]),
              weftSuccess)
        << weftGetLastError(comms_[r]);
  }
  ASSERT_EQ(syncAndAsync(""), "");
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(mp::compareElems(weftFloat32, download(buf[r], count * sizeof(float)).data(),
                               want.data(), count),
              "")
        << "rank " << r;
    EXPECT_EQ(weftRedOpDestroy(op[r], comms_[r]), weftSuccess);
    fake::memFree(buf[r]);
    fake::memFree(scalarOnDevice[r]);
  }
}

}  // namespace

// The selection table's GPU-ring row: its kinds and ops, at least one element,
// and WEFT_ALGO as a filter (ring keeps it; tree stages the calls through host
// memory: the results stay right and the ring's channels carry nothing).
TEST_F(StreamRingOneThread, TheGpuRingIsARowThatWeftAlgoFilters) {
  using weft::AlgoId;
  using weft::CollKind;
  weftComm* c = comms_[0];
  auto call = [](CollKind kind, size_t count, weftRedOp_t op) {
    return weft::makeCall(kind, nullptr, nullptr, count, weftFloat32, op, 0, -1);
  };
  EXPECT_TRUE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 16, weftSum)));
  EXPECT_TRUE(weft::selectGpuRing(c, call(CollKind::kAllGather, 16, weftSum)));
  EXPECT_TRUE(weft::selectGpuRing(c, call(CollKind::kReduce, 1, weftMax)));
  EXPECT_FALSE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 16, weftAvg)));
  EXPECT_FALSE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 0, weftSum)));
  EXPECT_FALSE(weft::selectGpuRing(c, call(CollKind::kAllToAll, 16, weftSum)));
  c->config.algo = AlgoId::kGpuRing;
  EXPECT_TRUE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 16, weftSum)));
  c->config.algo = AlgoId::kRing;  // the ring on either executor
  EXPECT_TRUE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 16, weftSum)));
  c->config.algo = AlgoId::kTree;
  EXPECT_FALSE(weft::selectGpuRing(c, call(CollKind::kAllReduce, 16, weftSum)));

  comms_[1]->config.algo = AlgoId::kTree;
  const uint64_t before = c->peerRing.sendSeq[0];
  EXPECT_EQ(allReduce(weftFloat32, weftSum, 1031, false), "");
  EXPECT_EQ(c->peerRing.sendSeq[0], before) << "WEFT_ALGO=tree still ran the GPU ring";
  for (int r = 0; r < kRanks; ++r) comms_[r]->config.algo = AlgoId::kAuto;
  EXPECT_EQ(allReduce(weftFloat32, weftSum, 1031, false), "");
  EXPECT_GT(c->peerRing.sendSeq[0], before) << "auto did not run the GPU ring";
}
