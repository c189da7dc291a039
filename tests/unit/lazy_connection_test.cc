// TCP's connection A made on first use (transports/tcp/lazy_connection.h),
// with every rank a thread of this process over TCP (WEFT_SHM_DISABLE=1):
// whichever end comes first, the pair ends with one connection and the bytes
// arrive; a receive from any source connects nowhere; a peer that left before
// the pair ever met fails the call at once, naming it.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/socket.h"
#include "core/comm.h"
#include "transports/tcp/tcp_transport.h"

namespace {

struct Comms {
  explicit Comms(int n) : comms(n, nullptr) {
    setenv("WEFT_SHM_DISABLE", "1", 1);
    setenv("WEFT_TUNE_SHM", "2,4", 1);  // no link measured at init: nobody connected yet
    ok = weftCommInitAll(comms.data(), n, nullptr) == weftSuccess;
    unsetenv("WEFT_SHM_DISABLE");
    unsetenv("WEFT_TUNE_SHM");
  }
  ~Comms() {
    for (weftComm_t c : comms)
      if (c != nullptr) weftCommDestroy(c);
  }
  int connections(int r) const { return comms[r]->tcp->openConnections(); }
  // Whether rank r's connection A to `peer` is one r connected (its local
  // port is not its listener's), rather than one it accepted.
  bool connectedBy(int r, int peer) const {
    weft::SockAddr local;
    socklen_t len = sizeof(local.ss);
    const int fd = comms[r]->tcp->socketFd(peer, 0);
    if (fd < 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&local.ss), &len) != 0) return false;
    return local.port() != comms[r]->bootstrap->peerAddr(r).port();
  }
  std::vector<weftComm_t> comms;
  bool ok = false;
};

// One send of `count` floats from `from` to `to`; the receiver comes
// `lateMs` after the sender. Returns the receiver's first and last values.
void sendLate(Comms& c, int from, int to, int lateMs, size_t count) {
  std::vector<float> out(count), in(count, -1.0f);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(i % 1000) + 0.5f;
  weftResult_t sent = weftInternalError, got = weftInternalError;
  std::thread sender(
      [&] { sent = weftSend(out.data(), count, weftFloat, to, c.comms[from], nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(lateMs));
  std::thread receiver(
      [&] { got = weftRecv(in.data(), count, weftFloat, from, c.comms[to], nullptr); });
  sender.join();
  receiver.join();
  ASSERT_EQ(sent, weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(got, weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(in, out);
}

TEST(LazyConnection, NoneAtInit) {
  Comms c(3);
  ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(c.connections(r), 0) << "rank " << r;
}

// The higher rank sends first: past its wait it offers a connection, which
// the lower rank takes when it comes to receive.
TEST(LazyConnection, HigherRankFirstIsTakenLater) {
  Comms c(2);
  ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
  sendLate(c, 1, 0, 200, 1000);
  sendLate(c, 0, 1, 0, 1000);  // and back, on the same connection
  EXPECT_EQ(c.connections(0), 1);
  EXPECT_EQ(c.connections(1), 1);
  EXPECT_TRUE(c.connectedBy(1, 0)) << "the higher rank's offer was not the one taken";
  EXPECT_FALSE(c.connectedBy(0, 1));
}

// The lower rank sends first: its connection is the pair's at once.
TEST(LazyConnection, LowerRankFirstConnects) {
  Comms c(2);
  ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
  sendLate(c, 0, 1, 200, 1000);
  sendLate(c, 1, 0, 0, 1000);
  EXPECT_EQ(c.connections(0), 1);
  EXPECT_EQ(c.connections(1), 1);
  EXPECT_TRUE(c.connectedBy(0, 1));
  EXPECT_FALSE(c.connectedBy(1, 0));
}

// Both ends at once, many times over: always one connection per pair, and
// every sum right.
TEST(LazyConnection, BothAtOnceMakeOneConnection) {
  for (int round = 0; round < 20; ++round) {
    Comms c(3);
    ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
    std::vector<float> in[3], out[3];
    weftResult_t got[3];
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r) {
      in[r].assign(64, static_cast<float>(r + 1));
      out[r].assign(64, 0.0f);
      ranks.emplace_back([&, r] {
        got[r] =
            weftAllReduce(in[r].data(), out[r].data(), 64, weftFloat, weftSum, c.comms[r], nullptr);
      });
    }
    for (auto& t : ranks) t.join();
    for (int r = 0; r < 3; ++r) {
      ASSERT_EQ(got[r], weftSuccess) << "round " << round << ": " << weftGetLastError(nullptr);
      EXPECT_EQ(out[r][63], 6.0f);
      EXPECT_EQ(c.connections(r), 2) << "round " << round << " rank " << r;
    }
  }
}

// A receive from any source looks at every peer but connects to none: rank 0
// ends with the one connection its sender made.
TEST(LazyConnection, ReceiveFromAnySourceConnectsNowhere) {
  Comms c(4);
  ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
  float value = 7.0f, got = 0.0f;
  int source = -1;
  weftResult_t recvd = weftInternalError, sent = weftInternalError;
  std::thread receiver([&] { recvd = weftRecvAny(&got, 1, weftFloat, &source, c.comms[0]); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread sender([&] { sent = weftSend(&value, 1, weftFloat, 0, c.comms[2], nullptr); });
  sender.join();
  receiver.join();
  ASSERT_EQ(sent, weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(recvd, weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(source, 2);
  EXPECT_EQ(got, 7.0f);
  EXPECT_EQ(c.connections(0), 1);
  EXPECT_EQ(c.connections(1), 0);
  EXPECT_EQ(c.connections(3), 0);
}

// A peer gone before the pair ever met: its listener is closed, so the first
// send to it is refused at once, with a sentence naming it.
TEST(LazyConnection, PeerGoneBeforeFirstContactFailsAtOnce) {
  Comms c(2);
  ASSERT_TRUE(c.ok) << weftGetLastError(nullptr);
  ASSERT_EQ(weftCommDestroy(c.comms[1]), weftSuccess);
  c.comms[1] = nullptr;
  float value = 1.0f;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(weftSend(&value, 1, weftFloat, 1, c.comms[0], nullptr), weftRemoteError);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(std::string(weftGetLastError(c.comms[0])).find("rank 1"), std::string::npos)
      << weftGetLastError(c.comms[0]);
  EXPECT_LT(took, 2.0);
}

}  // namespace
