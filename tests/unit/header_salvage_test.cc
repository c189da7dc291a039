// HeaderedPlan::salvageHeaders (collectives/header_plan.h) with in-memory
// channels. After a transport failure a rank reads the call headers it has not
// yet compared, so that a peer which found a mismatch and closed at once is
// reported as the mismatch (weftInvalidUsage) rather than as a remote error.
// Its time limit is shared by every missing header; a header that sits ready
// must still be read when an earlier peer used up that time (a thread
// preempted under load does the same), else one rank of a mismatched call is
// told "remote error" while the others are told why.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/call_header.h"
#include "base/error.h"
#include "collectives/flow_engine.h"
#include "collectives/header_plan.h"
#include "core/call.h"
#include "transports/channel.h"

namespace {

// Send side: takes everything. Receive side: hands out `ready`, only its
// first `earlyBytes` before `readyAt` (a header split over two segments, the
// second late); with `stallMs` > 0 each try stalls first (a slow machine);
// `broken`, or the `failFromTry`th try on, fails (a closed connection).
class MemChannel : public weft::Channel {
 public:
  weftResult_t trySend(const void*, size_t bytes, size_t* moved) override {
    *moved = bytes;
    return weftSuccess;
  }
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override {
    ++tries;
    *moved = 0;
    if (broken || (failFromTry > 0 && tries >= failFromTry))
      return weft::setError(weftRemoteError, "%s closed its connection", name_.c_str());
    if (stallMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stallMs));
    size_t avail = ready.size();
    if (std::chrono::steady_clock::now() < readyAt)
      avail = taken < earlyBytes ? std::min(avail, earlyBytes - taken) : 0;
    const size_t n = std::min(bytes, avail);
    if (n > 0) std::memcpy(data, ready.data(), n);  // an empty vector may have no data()
    ready.erase(ready.begin(), ready.begin() + static_cast<long>(n));
    taken += n;
    *moved = n;
    return weftSuccess;
  }
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override {
    *got = std::min(bytes, ready.size());
    if (*got > 0) std::memcpy(data, ready.data(), *got);
    return weftSuccess;
  }
  weft::ChannelWake wake() const override {
    return {sharedMemory ? weft::ChannelWake::Via::kDoorbell : weft::ChannelWake::Via::kRetry, -1};
  }
  const std::string& peerName() const override { return name_; }
  // As shared memory does; over a socket the peer's exit fails the receive instead.
  weftResult_t checkPeer() const override {
    return sharedMemory && exited ? weft::setError(weftRemoteError, "%s exited", name_.c_str())
                                  : weftSuccess;
  }

  std::vector<char> ready;
  std::chrono::steady_clock::time_point readyAt{};  // all of `ready` is there from then on
  size_t earlyBytes = 0;
  size_t taken = 0;
  int stallMs = 0;
  bool broken = false;
  int failFromTry = 0;
  bool sharedMemory = false;  // a doorbell channel, whose peer may have
  bool exited = false;        // exited, leaving its FIFO readable
  int tries = 0;

 private:
  std::string name_ = "peer";
};

class MemTable : public weft::ChannelTable {
 public:
  explicit MemTable(int nranks) : send_(nranks), recv_(nranks) {}
  weft::Channel* sendChannel(int peer, int) override { return &send_[peer]; }
  weft::Channel* recvChannel(int peer, int) override { return &recv_[peer]; }
  int nstreams() const override { return 1; }
  MemChannel& recv(int peer) { return recv_[peer]; }

 private:
  std::vector<MemChannel> send_, recv_;
};

// A collective that receives one item from rank 1 over `channel`, which is
// not the header's (a large call's data over TCP has its own connection).
class OneReceive : public weft::FlowPlan {
 public:
  explicit OneReceive(weft::Channel* channel) : channel_(channel) {}
  int numFlows() const override { return 1; }
  weft::Channel* channel(int) const override { return channel_; }
  bool isSend(int) const override { return false; }
  int64_t numItems(int) const override { return 1; }
  weft::FlowItem item(int, int64_t) const override {
    weft::FlowItem it;
    it.data = const_cast<char*>(buf_);
    it.bytes = sizeof(buf_);
    return it;
  }

 private:
  weft::Channel* channel_;
  char buf_[64] = {};
};

// A collective with no data flows: only the headers move.
class NoData : public weft::FlowPlan {
 public:
  int numFlows() const override { return 0; }
  weft::Channel* channel(int) const override { return nullptr; }
  bool isSend(int) const override { return false; }
  int64_t numItems(int) const override { return 0; }
  weft::FlowItem item(int, int64_t) const override { return weft::FlowItem(); }
};

weft::CallHeader reduceHeader(int root) {
  weft::CallHeader h;
  h.magic = weft::kCallMagic;
  h.kind = static_cast<uint8_t>(weft::CollKind::kReduce);
  h.datatype = weftFloat32;
  h.op = weftSum;
  h.root = root;
  h.seq = 1;
  h.count = 300000;
  return h;
}

void put(MemChannel& ch, const weft::CallHeader& h) {
  const char* p = reinterpret_cast<const char*>(&h);
  ch.ready.assign(p, p + sizeof(h));
}

struct Rank0 {
  MemTable table{3};
  weft::CallCheck check;
  NoData none;
  Rank0() {
    check.mine = reduceHeader(0);
    check.rank = 0;
    check.nranks = 3;
    check.channels = &table;
  }
};

TEST(HeaderSalvage, ReadsAReadyHeaderAfterAnEarlierPeerUsedUpTheTime) {
  Rank0 r;
  r.table.recv(1).stallMs = 520;  // rank 1 never sends, and its one try outlasts the limit
  put(r.table.recv(2), reduceHeader(2));
  weft::HeaderedPlan plan(r.none, r.check);
  EXPECT_EQ(plan.salvageHeaders(), weftInvalidUsage);
  EXPECT_EQ(r.table.recv(2).tries, 1);
  EXPECT_NE(weft::lastError().find("rank 2 called reduce"), std::string::npos) << weft::lastError();
  EXPECT_NE(weft::lastError().find("the roots differ (2 vs 0)"), std::string::npos)
      << weft::lastError();
}

// The header left before the peer's close, but over another connection than
// the one that failed us, and the kernel may deliver it late under load.
TEST(HeaderSalvage, WaitsForAHeaderDeliveredLate) {
  Rank0 r;
  put(r.table.recv(1), reduceHeader(0));
  put(r.table.recv(2), reduceHeader(2));
  r.table.recv(2).readyAt = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  weft::HeaderedPlan plan(r.none, r.check);
  EXPECT_EQ(plan.salvageHeaders(), weftInvalidUsage);
  EXPECT_NE(weft::lastError().find("the roots differ (2 vs 0)"), std::string::npos)
      << weft::lastError();
}

// The engine read the first 10 bytes of rank 1's header when rank 1's data
// connection closed; the rest comes later. The salvage must read on from
// byte 10, not take the rest for a header of its own.
TEST(HeaderSalvage, ReadsOnFromWhereTheEngineStopped) {
  MemTable headers(2);
  MemChannel data;
  data.failFromTry = 2;  // the engine's second pass meets the close
  put(headers.recv(1), reduceHeader(1));
  headers.recv(1).earlyBytes = 10;
  headers.recv(1).readyAt = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  weft::CallCheck check;
  check.mine = reduceHeader(0);
  check.pending = true;
  check.rank = 0;
  check.nranks = 2;
  check.channels = &headers;
  OneReceive plan(&data);
  weft::FlowRunOptions opts;
  opts.timeoutSec = 10;
  opts.check = &check;
  EXPECT_EQ(weft::runFlows(plan, opts), weftInvalidUsage) << weft::lastError();
  EXPECT_GE(data.tries, 2);
  EXPECT_NE(weft::lastError().find("rank 1 called reduce #1 (300000 x float, sum, root 1)"),
            std::string::npos)
      << weft::lastError();
}

TEST(HeaderSalvage, AgreeingAndBrokenPeersAreNoMismatch) {
  Rank0 r;
  put(r.table.recv(1), reduceHeader(0));
  r.table.recv(2).broken = true;  // exited before its header: nothing to compare
  weft::HeaderedPlan plan(r.none, r.check);
  EXPECT_EQ(plan.salvageHeaders(), weftSuccess);
  EXPECT_FALSE(r.check.mismatch);
  EXPECT_EQ(r.table.recv(2).tries, 1);
}

TEST(HeaderSalvage, AnExitedSharedMemoryPeerEndsItsWait) {
  Rank0 r;
  r.table.recv(1).sharedMemory = true;
  r.table.recv(1).exited = true;  // and it wrote no header
  put(r.table.recv(2), reduceHeader(0));
  weft::HeaderedPlan plan(r.none, r.check);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(plan.salvageHeaders(), weftSuccess);
  // One try, the death seen, one last try: not the whole limit.
  EXPECT_EQ(r.table.recv(1).tries, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
}

TEST(HeaderSalvage, GivesUpOnASilentPeerWithinItsLimit) {
  Rank0 r;
  r.table.recv(1).stallMs = 1;
  r.table.recv(2).stallMs = 1;
  weft::HeaderedPlan plan(r.none, r.check);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(plan.salvageHeaders(), weftSuccess);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // Bounded: the limit (500 ms) plus one try per peer, not a wait for the peers.
  EXPECT_LT(ms, 2000.0);
  EXPECT_GT(r.table.recv(1).tries, 1);
  EXPECT_GE(r.table.recv(2).tries, 1);
}

}  // namespace
