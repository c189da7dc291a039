// StripedChannel over real loopback TCP pairs (TCP's lanes): the wire contract (stream byte p on
// lane (p / 128 KiB) % lanes, so both ends agree without headers), every byte
// in order whatever item sizes each end uses and however sends and receives
// are cut short, stable sends mixed with copies, lanes moving ahead while the
// stream's next lane is full, and a dead lane as an error naming the peer.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "loopback_tcp.h"
#include "transports/striped_channel.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {
namespace {

constexpr size_t kPiece = StripedChannel::kPieceBytes;

// `n` connected loopback pairs; sender ends in out[], receiver ends in in[].
struct LanePairs {
  std::vector<int> out, in;
  explicit LanePairs(int n) { connectLoopbackPairs(n, &out, &in); }
  ~LanePairs() {
    for (int f : out) close(f);
    for (int f : in)
      if (f >= 0) close(f);
  }
};

// Channels over one end of each pair, and the StripedChannel over them.
struct LaneEnd {
  std::vector<std::unique_ptr<TcpChannel>> owned;
  std::unique_ptr<StripedChannel> lanes;
  LaneEnd(const std::vector<int>& fds, size_t spliceMin) {
    std::vector<Channel*> raw;
    for (int fd : fds) {
      owned.push_back(std::make_unique<TcpChannel>(fd, "rank 1", spliceMin));
      raw.push_back(owned.back().get());
    }
    lanes = std::make_unique<StripedChannel>(raw);
  }
};

std::vector<char> pattern(size_t n, unsigned seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed) >> 3);
  return v;
}

// Moves `buf` through `ch` in items of random size (a new item only once the
// last one is whole, as the flow engine does), yielding when nothing moves.
// stable: items of 64 KiB or more go through trySendStable.
void sendItems(Channel* ch, const std::vector<char>& buf, unsigned seed, bool stable,
               weftResult_t* result) {
  std::mt19937 rng(seed);
  size_t at = 0;
  while (at < buf.size()) {
    size_t item = std::min<size_t>(buf.size() - at, 1 + rng() % (700 << 10));
    size_t done = 0;
    while (done < item) {
      size_t moved = 0;
      const char* p = buf.data() + at + done;
      weftResult_t r = stable && item >= (64 << 10) ? ch->trySendStable(p, item - done, &moved)
                                                    : ch->trySend(p, item - done, &moved);
      if (r != weftSuccess) {
        *result = r;
        return;
      }
      if (moved == 0) std::this_thread::yield();
      done += moved;
    }
    at += item;
  }
  *result = weftSuccess;
}

void recvItems(Channel* ch, std::vector<char>* buf, unsigned seed, weftResult_t* result) {
  std::mt19937 rng(seed);
  size_t at = 0;
  while (at < buf->size()) {
    size_t item = std::min<size_t>(buf->size() - at, 1 + rng() % (300 << 10));
    size_t done = 0;
    while (done < item) {
      size_t moved = 0;
      weftResult_t r = ch->tryRecv(buf->data() + at + done, item - done, &moved);
      if (r != weftSuccess) {
        *result = r;
        return;
      }
      if (moved == 0) std::this_thread::yield();
      done += moved;
    }
    at += item;
  }
  *result = weftSuccess;
}

void roundTrip(int nlanes, bool stable) {
  LanePairs pairs(nlanes);
  LaneEnd tx(pairs.out, 64 << 10), rx(pairs.in, 0);
  const std::vector<char> sent = pattern((5 << 20) + 12345, 7);
  std::vector<char> got(sent.size(), 0);
  weftResult_t sr = weftInternalError, rr = weftInternalError;
  std::thread sender(sendItems, tx.lanes.get(), std::cref(sent), 11u, stable, &sr);
  recvItems(rx.lanes.get(), &got, 29u, &rr);
  sender.join();
  ASSERT_EQ(sr, weftSuccess) << lastError();
  ASSERT_EQ(rr, weftSuccess) << lastError();
  EXPECT_TRUE(got == sent) << nlanes << " lanes: the bytes differ";
}

TEST(StripedChannel, EveryByteArrivesInOrderWhateverTheItemSizes) {
  for (int n : {1, 2, 3, 4}) roundTrip(n, false);
}

TEST(StripedChannel, StableSendsMixWithCopies) {
  for (int n : {2, 3}) roundTrip(n, true);
}

// The wire contract, read off the raw sockets: piece k of the stream is on
// lane k % lanes, in order.
TEST(StripedChannel, PieceKTravelsOnLaneKModLanes) {
  const int n = 3;
  LanePairs pairs(n);
  LaneEnd tx(pairs.out, 0);
  const std::vector<char> sent = pattern(7 * kPiece + 1000, 3);
  weftResult_t sr = weftInternalError;
  std::thread sender(sendItems, tx.lanes.get(), std::cref(sent), 5u, false, &sr);
  std::vector<std::vector<char>> lane(n);
  for (size_t k = 0; k * kPiece < sent.size(); ++k) {
    size_t len = std::min(kPiece, sent.size() - k * kPiece);
    size_t old = lane[k % n].size();
    lane[k % n].resize(old + len);
    size_t have = 0;
    while (have < len) {
      ssize_t r = recv(pairs.in[k % n], lane[k % n].data() + old + have, len - have, 0);
      ASSERT_GT(r, 0);
      have += static_cast<size_t>(r);
    }
    EXPECT_TRUE(std::equal(sent.begin() + static_cast<ptrdiff_t>(k * kPiece),
                           sent.begin() + static_cast<ptrdiff_t>(k * kPiece + len),
                           lane[k % n].begin() + static_cast<ptrdiff_t>(old)))
        << "piece " << k;
  }
  sender.join();
  EXPECT_EQ(sr, weftSuccess) << lastError();
}

// While nobody drains lane 0 (its socket fills) and lane 1 is drained, lane 1
// keeps taking its pieces of the same send: the lanes move side by side, not
// in turn, so lane 1 ends far past its share of the stream's contiguous part.
TEST(StripedChannel, OtherLanesMoveAheadWhileTheNextOneIsFull) {
  LanePairs pairs(2);
  LaneEnd tx(pairs.out, 0);
  const std::vector<char> big = pattern(64 << 20, 1);
  std::vector<char> buf(1 << 20);
  size_t sent = 0, moved = 0, lane1 = 0;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(tx.lanes->trySend(big.data() + sent, big.size() - sent, &moved), weftSuccess);
    sent += moved;
    ssize_t r = recv(pairs.in[1], buf.data(), buf.size(), MSG_DONTWAIT);
    if (r > 0) lane1 += static_cast<size_t>(r);
  }
  ASSERT_LT(sent, big.size()) << "lane 0 took 32 MiB without a reader";
  EXPECT_GT(lane1, sent / 2 + 8 * kPiece) << "lane 1 waited for lane 0";
}

TEST(StripedChannel, ALaneWhosePeerClosedIsAnErrorNamingThePeer) {
  LanePairs pairs(2);
  LaneEnd rx(pairs.in, 0);
  close(pairs.out[0]);
  pairs.out[0] = socket(AF_INET, SOCK_STREAM, 0);  // keep the destructor's close harmless
  std::vector<char> buf(4 * kPiece);
  size_t moved = 0;
  weftResult_t r = weftSuccess;
  for (int i = 0; i < 1000 && r == weftSuccess; ++i)
    r = rx.lanes->tryRecv(buf.data(), buf.size(), &moved);
  EXPECT_EQ(r, weftRemoteError);
  EXPECT_NE(lastError().find("rank 1"), std::string::npos) << lastError();
}

// A lane in memory: whatever is sent can be received or peeked at once; it
// records the stream bytes it had carried when each one-sided write came.
class MemoryLane : public Channel, public weft::RemoteWrites {
 public:
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override {
    const char* d = static_cast<const char*>(data);
    bytes_.insert(bytes_.end(), d, d + bytes);
    carried_ += bytes;
    *moved = bytes;
    return weftSuccess;
  }
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override {
    WEFT_CHECK(tryPeek(data, bytes, moved));
    bytes_.erase(bytes_.begin(), bytes_.begin() + static_cast<ptrdiff_t>(*moved));
    return weftSuccess;
  }
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override {
    *got = std::min(bytes, bytes_.size());
    std::copy(bytes_.begin(), bytes_.begin() + static_cast<ptrdiff_t>(*got),
              static_cast<char*>(data));
    return weftSuccess;
  }
  ChannelWake wake() const override { return {}; }
  const std::string& peerName() const override { return name_; }
  weft::RemoteWrites* remoteWrites() override { return this; }
  weftResult_t tryPut(uint64_t, uint32_t, uint64_t, uint32_t, size_t, bool* posted) override {
    puts_.push_back(carried_);
    *posted = true;
    return weftSuccess;
  }
  std::vector<size_t> puts_;  // bytes this lane had carried at each put

 private:
  std::vector<char> bytes_;
  size_t carried_ = 0;
  std::string name_ = "rank 1";
};

// A one-sided write goes on the lane that carries the next stream byte (as
// verbs orders it before those bytes), and a peek reads the stream across
// pieces, from the lanes that carry them.
TEST(StripedChannel, PutsGoOnTheNextBytesLaneAndPeeksCrossPieces) {
  MemoryLane lanes[3];
  std::vector<Channel*> raw = {&lanes[0], &lanes[1], &lanes[2]};
  StripedChannel tx(raw), rx(raw);
  ASSERT_EQ(tx.remoteWrites(), &tx);
  const std::vector<char> sent = pattern(300 << 10, 5);
  size_t moved = 0;
  bool posted = false;
  ASSERT_EQ(tx.trySend(sent.data(), 200 << 10, &moved), weftSuccess);
  ASSERT_EQ(moved, size_t{200} << 10);
  ASSERT_EQ(tx.tryPut(0, 0, 0, 0, 8, &posted), weftSuccess);  // stream byte 200K: lane 1
  ASSERT_EQ(tx.trySend(sent.data() + moved, sent.size() - moved, &moved), weftSuccess);
  ASSERT_EQ(tx.tryPut(0, 0, 0, 0, 8, &posted), weftSuccess);  // stream byte 300K: lane 2
  EXPECT_EQ(lanes[0].puts_, std::vector<size_t>{});
  EXPECT_EQ(lanes[1].puts_, std::vector<size_t>{(200 << 10) - kPiece});
  EXPECT_EQ(lanes[2].puts_, std::vector<size_t>{(300 << 10) - 2 * kPiece});
  std::vector<char> got(sent.size());
  size_t n = 0;
  ASSERT_EQ(rx.tryRecv(got.data(), 100, &n), weftSuccess);
  ASSERT_EQ(n, 100u);
  ASSERT_EQ(rx.tryPeek(got.data() + 100, sent.size(), &n), weftSuccess);
  EXPECT_EQ(n, sent.size() - 100);
  EXPECT_TRUE(got == sent);
}

}  // namespace
}  // namespace weft
