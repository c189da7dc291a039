// The GPU ring's host proxy (device/ring_proxy.h) between threads:
// every rank's neighbours are "on other nodes", so every edge is an outbox,
// a proxy, a byte stream and an inbox. The streams are in-memory pipes that
// move at most a few bytes per call and hold little, so frames are always
// split and senders meet back-pressure. Kernels are threads running
// runRingCta (the code of every CTA), several calls in a row: the results
// must be exact and the pipes empty after each call (nothing of a call is
// left for the next one's host traffic, and the proxy does not read what
// follows its call on a stream). A malformed frame is an error.
// Put mode (ring_rdma.h) runs the same calls with one-sided writes: the pipes
// copy a put at once (so it precedes the frame) and refuse every third one
// (a full send queue), and with "GPU" slots the kernels use buffers apart
// from the host FIFOs, which the proxy must never fill itself, and no tail
// may move before a flush that follows the message's arrival.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collectives/kernels/ring_call.h"
#include "device/gpu_peer_layout.h"
#include "device/ring_proxy.h"
#include "ring_cta_threads.h"
#include "transports/channel.h"
#include "transports/rdma_memory.h"

namespace {

using weft::dev::RingCall;

// One direction of one host stream: a bounded byte queue.
class Pipe : public weft::Channel, public weft::RemoteWrites {
 public:
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = std::min({bytes, kStep, kCapacity - q_.size()});
    const auto* p = static_cast<const unsigned char*>(data);
    q_.insert(q_.end(), p, p + n);
    *moved = n;
    return weftSuccess;
  }
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = std::min({bytes, kStep + 6, q_.size()});
    std::copy(q_.begin(), q_.begin() + static_cast<long>(n), static_cast<unsigned char*>(data));
    q_.erase(q_.begin(), q_.begin() + static_cast<long>(n));
    *moved = n;
    return weftSuccess;
  }
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override {
    std::lock_guard<std::mutex> lock(mu_);
    *got = std::min(bytes, q_.size());
    std::copy(q_.begin(), q_.begin() + static_cast<long>(*got), static_cast<unsigned char*>(data));
    return weftSuccess;
  }
  weft::ChannelWake wake() const override { return {}; }
  const std::string& peerName() const override { return name_; }
  weft::RemoteWrites* remoteWrites() override { return this; }
  weftResult_t tryPut(uint64_t localAddr, uint32_t, uint64_t remoteAddr, uint32_t, size_t bytes,
                      bool* posted) override {
    *posted = ++puts_ % 3 != 0;
    if (*posted)
      std::memcpy(reinterpret_cast<void*>(remoteAddr), reinterpret_cast<const void*>(localAddr),
                  bytes);
    return weftSuccess;
  }
  size_t queued() {
    std::lock_guard<std::mutex> lock(mu_);
    return q_.size();
  }
  void drain() {
    std::lock_guard<std::mutex> lock(mu_);
    q_.clear();
  }
  void inject(const void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto* p = static_cast<const unsigned char*>(data);
    q_.insert(q_.end(), p, p + bytes);
  }

 private:
  static constexpr size_t kStep = 4099;       // odd: frames and payloads split anywhere
  static constexpr size_t kCapacity = 20000;  // well under one slot: back-pressure
  std::mutex mu_;
  std::deque<unsigned char> q_;
  std::string name_ = "pipe";
  uint64_t puts_ = 0;
};

// pipes[from][to][stream]; a rank's table looks up its own row and column.
struct Net {
  Net(int n, int streams) : n(n), streams(streams) {
    for (int i = 0; i < n * n * streams; ++i) pipes.push_back(std::make_unique<Pipe>());
  }
  Pipe* at(int from, int to, int s) { return pipes[(from * n + to) * streams + s].get(); }
  int n, streams;
  std::vector<std::unique_ptr<Pipe>> pipes;
};

class Table : public weft::ChannelTable {
 public:
  Table(Net* net, int rank) : net_(net), rank_(rank) {}
  weft::Channel* sendChannel(int peer, int s) override { return net_->at(rank_, peer, s); }
  weft::Channel* recvChannel(int peer, int s) override { return net_->at(peer, rank_, s); }
  int nstreams() const override { return net_->streams; }

 private:
  Net* net_;
  int rank_;
};

// A rank: its outbox and inbox regions, the kernel's channels over them, its proxy.
struct Rank {
  Rank(Net* net, int r, int n, int channels)
      : table(net, r),
        outbox(weft::ringMemoryBytes(channels)),
        inbox(weft::ringMemoryBytes(channels)),
        gpuOut(weft::ringMemoryBytes(channels)),
        gpuIn(weft::ringMemoryBytes(channels)) {
    proxy.init(&table, channels, (r + 1) % n, (r + n - 1) % n, outbox.data(), inbox.data());
  }
  // `slots`: where the slots are (the region itself, or "GPU" slots).
  weft::dev::Channel fifo(std::vector<unsigned char>& box, std::vector<unsigned char>& slots, int c,
                          const int* abort) {
    unsigned char* at = box.data() + weft::ringRegionOffset(c);
    return weft::dev::Channel{slots.data() + weft::ringRegionOffset(c) + weft::kRingSlotsOffset,
                              reinterpret_cast<uint64_t*>(at + weft::kRingSizesOffset),
                              reinterpret_cast<uint64_t*>(at + weft::kRingTailOffset),
                              reinterpret_cast<uint64_t*>(at + weft::kRingHeadOffset),
                              weft::kRingSlots,
                              weft::kRingSlotBytes,
                              abort};
  }
  Table table;
  std::vector<unsigned char> outbox, inbox;
  std::vector<unsigned char> gpuOut, gpuIn;  // put mode's "GPU" slots
  weft::RingProxy proxy;
  // The inbox tails the kernels see, summed over the channels.
  uint64_t tails(int channels) {
    uint64_t sum = 0;
    for (int c = 0; c < channels; ++c)
      sum += __atomic_load_n(reinterpret_cast<uint64_t*>(inbox.data() + weft::ringRegionOffset(c) +
                                                         weft::kRingTailOffset),
                             __ATOMIC_ACQUIRE);
    return sum;
  }
  int flushes = 0;
  uint64_t tailsAtFlush = 0;  // tails() when the last flush ran
  uint64_t tailsSeen = 0;     // and after the last pump
  int flushesSeen = 0;
};

enum class Mode { kFrames, kPutsHost, kPutsGpu };

uint64_t addressOf(std::vector<unsigned char>& v) { return reinterpret_cast<uintptr_t>(v.data()); }

void runCalls(int n, int channels, int streams, Mode mode = Mode::kFrames) {
  Net net(n, streams);
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<Rank>(&net, r, n, channels));
  const bool gpu = mode == Mode::kPutsGpu;
  for (int r = 0; mode != Mode::kFrames && r < n; ++r) {
    Rank& me = *ranks[r];
    Rank& next = *ranks[(r + 1) % n];
    me.proxy.sendByPut(addressOf(gpu ? me.gpuOut : me.outbox), 0,
                       addressOf(gpu ? next.gpuIn : next.inbox), 0);
    me.proxy.landByPut(gpu, [&me, channels] {
      me.tailsAtFlush = me.tails(channels);
      ++me.flushes;
      return weftSuccess;
    });
  }
  int landed = 0;
  std::vector<uint64_t> seq(static_cast<size_t>(channels), 0);
  int abort = 0;
  for (uint64_t count : {300000ull, 1ull, 70001ull}) {
    std::vector<std::vector<float>> data(n, std::vector<float>(count));
    for (int r = 0; r < n; ++r)
      for (uint64_t i = 0; i < count; ++i) data[r][i] = static_cast<float>(i % 11 + r);
    std::vector<RingCall> calls;
    std::vector<uint64_t> end(seq);
    for (int r = 0; r < n; ++r) {
      calls.push_back(weft::test::ringCall(weft::dev::kRingAllReduce, data[r].data(),
                                           data[r].data(), count, r, n, channels, &abort));
      RingCall& call = calls[r];
      for (int c = 0; c < channels; ++c) {
        call.sendSeq[c] = call.recvSeq[c] = seq[c];
        Rank& me = *ranks[r];
        call.send[c] = me.fifo(me.outbox, gpu ? me.gpuOut : me.outbox, c, &abort);
        call.recv[c] = me.fifo(me.inbox, gpu ? me.gpuIn : me.inbox, c, &abort);
      }
    }
    for (int c = 0; c < channels; ++c) {
      uint64_t begin = 0, len = 0;
      weft::dev::ringCtaShare(count, channels, c, &begin, &len);
      end[c] += weft::dev::ringMessages(len, n, weft::kRingSlotBytes, 4);
    }
    for (auto& rank : ranks) rank->proxy.beginCall(end.data(), end.data());
    weft::test::RingCtaThreads<float, weft::dev::OpSum> kernels(calls, channels);
    // A failed assertion below returns with the kernels still waiting: stop them.
    struct AbortOnReturn {
      int* word;
      ~AbortOnReturn() {
        if (word != nullptr) __atomic_store_n(word, 1, __ATOMIC_RELEASE);
      }
    } stopKernels{&abort};
    bool done = false;
    while (!done) {
      done = !kernels.running();
      for (auto& rank : ranks) {
        bool moved = false;
        ASSERT_EQ(rank->proxy.pump(&moved), weftSuccess);
        done = done && rank->proxy.callDone();
        // GPU slots: tails move only after a flush that ran before they moved.
        const uint64_t tails = rank->tails(channels);
        if (gpu && tails != rank->tailsSeen) {
          ASSERT_GT(rank->flushes, rank->flushesSeen) << "tails moved without a flush";
          ASSERT_EQ(rank->tailsAtFlush, rank->tailsSeen) << "the flush ran after the tails moved";
        }
        rank->tailsSeen = tails;
        rank->flushesSeen = rank->flushes;
      }
      if (done) break;
      std::this_thread::yield();
    }
    kernels.join();
    stopKernels.word = nullptr;
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < channels; ++c) ASSERT_EQ(calls[r].status[c], weft::dev::kRingCtaDone);
      for (uint64_t i = 0; i < count; ++i)
        ASSERT_EQ(data[r][i], static_cast<float>(n * (i % 11)) + n * (n - 1) / 2)
            << n << " ranks, count " << count << ", rank " << r << ", element " << i;
    }
    for (auto& p : net.pipes) EXPECT_EQ(p->queued(), 0u) << "bytes left after a call";
    for (int c = 0; c < channels; ++c) landed += static_cast<int>(end[c] - seq[c]);
    for (auto& rank : ranks) {
      // One flush per pump that landed something: at least one, at most one a message.
      if (gpu) {
        EXPECT_GE(rank->flushes, 1);
        EXPECT_LE(rank->flushes, landed);
      } else {
        EXPECT_EQ(rank->flushes, 0);
      }
      // With GPU slots the host FIFOs carry counters only.
      for (int c = 0; gpu && c < channels; ++c)
        for (size_t b = 0; b < weft::kRingSizesOffset; ++b) {
          const size_t at = weft::ringRegionOffset(c) + weft::kRingSlotsOffset + b;
          ASSERT_EQ(rank->outbox[at] | rank->inbox[at], 0) << "the proxy wrote a host slot";
        }
    }
    // What follows on a stream (the next call's header) is not the proxy's.
    const char next[17] = "next call header";
    for (auto& p : net.pipes) p->inject(next, 16);
    for (auto& rank : ranks) {
      bool moved = true;
      ASSERT_EQ(rank->proxy.pump(&moved), weftSuccess);
      EXPECT_FALSE(moved);
    }
    for (auto& p : net.pipes) {
      EXPECT_EQ(p->queued(), 16u) << "the proxy read past its call";
      p->drain();
    }
    seq = end;
  }
}

TEST(RingProxy, TwoRanksShareEveryStreamBothWays) { runCalls(2, 3, 2); }
TEST(RingProxy, ThreeRanksMoreChannelsThanStreams) { runCalls(3, 5, 2); }
TEST(RingProxy, FourRanksOneStream) { runCalls(4, 2, 1); }
TEST(RingProxy, PutsIntoHostSlots) { runCalls(3, 3, 2, Mode::kPutsHost); }
TEST(RingProxy, PutsIntoGpuSlotsAreFlushed) { runCalls(3, 5, 2, Mode::kPutsGpu); }
TEST(RingProxy, PutsTwoRanksOneStream) { runCalls(2, 2, 1, Mode::kPutsGpu); }

// A payload frame cannot land in GPU slots: only the NIC reaches them.
TEST(RingProxy, APayloadFrameForGpuSlotsIsAnError) {
  Net net(2, 1);
  Rank r0(&net, 0, 2, 1);
  r0.proxy.landByPut(true, [] { return weftSuccess; });
  const uint64_t end[1] = {4};
  r0.proxy.beginCall(end, end);
  const uint32_t frame[4] = {0, 1, 8, 0};  // channel 0, data, 8 bytes
  net.at(1, 0, 0)->inject(frame, sizeof(frame));
  bool moved = false;
  EXPECT_EQ(r0.proxy.pump(&moved), weftInternalError);
}

TEST(RingProxy, AFrameForAChannelThatDoesNotExistIsAnError) {
  Net net(2, 1);
  Rank r0(&net, 0, 2, 2);
  const uint64_t end[2] = {4, 4};
  r0.proxy.beginCall(end, end);
  const uint32_t bogus[4] = {7, 1, 16, 0};  // channel 7 of 2, data, 16 bytes
  net.at(1, 0, 0)->inject(bogus, sizeof(bogus));
  bool moved = false;
  EXPECT_EQ(r0.proxy.pump(&moved), weftInternalError);
}

TEST(RingProxy, DataWithNoFreeSlotIsAnError) {
  Net net(2, 1);
  Rank r0(&net, 0, 2, 1);
  const uint64_t end[1] = {100};
  r0.proxy.beginCall(end, end);
  // Five messages of channel 0 in a row; the kernel consumed none, and there are four slots.
  for (int k = 0; k < 5; ++k) {
    const uint32_t frame[4] = {0, 1, 8, 0};
    const uint64_t payload = 42;
    net.at(1, 0, 0)->inject(frame, sizeof(frame));
    net.at(1, 0, 0)->inject(&payload, sizeof(payload));
  }
  bool moved = false;
  weftResult_t r = weftSuccess;
  for (int i = 0; i < 10 && r == weftSuccess; ++i) r = r0.proxy.pump(&moved);
  EXPECT_EQ(r, weftInternalError);
}

}  // namespace
