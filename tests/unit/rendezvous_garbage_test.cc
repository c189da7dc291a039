// Checks that the rendezvous root survives strangers: TCP connections to the
// root's address (decoded from the unique id) that send garbage, a Hello with
// the wrong secret, half a Hello, or nothing at all, must not stop a following
// good 2-rank init from succeeding (port scanners and stale jobs exist).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/hello_gate.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

namespace {

using Clock = std::chrono::steady_clock;

weft::SockAddr rootOf(const weftUniqueId& id) {
  weft::UniqueIdBody body{};
  std::string why;
  EXPECT_TRUE(weft::unpackUniqueId(id.internal, &body, &why)) << why;
  return weft::fromWire(body.root);
}

// A plain blocking connection to the root; -1 on failure.
int dial(const weft::SockAddr& addr) {
  int fd = socket(addr.family(), SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr.ss), addr.len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void sendBytes(int fd, const void* data, size_t bytes) {
  ASSERT_EQ(send(fd, data, bytes, MSG_NOSIGNAL), static_cast<ssize_t>(bytes));
}

// Two ranks init on `id` from two threads, then allreduce once to prove the
// communicators work. Returns the seconds init took.
double initTwoRanks(const weftUniqueId& id) {
  weftComm_t comms[2] = {nullptr, nullptr};
  weftResult_t results[2] = {weftInternalError, weftInternalError};
  std::string errors[2];
  Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      results[r] = weftCommInitRank(&comms[r], 2, id, r);
      errors[r] = weftGetLastError(nullptr);
    });
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(results[r], weftSuccess) << "rank " << r << ": " << errors[r];
  if (results[0] != weftSuccess || results[1] != weftSuccess) return seconds;
  threads.clear();
  int sums[2] = {0, 0};
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      int mine = r + 1;
      results[r] = weftAllReduce(&mine, &sums[r], 1, weftInt32, weftSum, comms[r], nullptr);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], weftSuccess);
    EXPECT_EQ(sums[r], 3);
    EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess);
  }
  return seconds;
}

class RendezvousGarbage : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_TIMEOUT", "30", 1);
    ASSERT_EQ(weftGetUniqueId(&id_), weftSuccess) << weftGetLastError(nullptr);
    root_ = rootOf(id_);
  }
  weftUniqueId id_;
  weft::SockAddr root_;
};

TEST_F(RendezvousGarbage, GarbageThenClose) {
  std::vector<char> junk(4096);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>(i * 131 + 7);
  for (size_t bytes : {sizeof(weft::Hello), junk.size(), size_t{3}, size_t{0}}) {
    int fd = dial(root_);
    ASSERT_GE(fd, 0) << "cannot connect to the root at " << root_.str();
    if (bytes > 0) sendBytes(fd, junk.data(), bytes);
    close(fd);
  }
  EXPECT_LT(initTwoRanks(id_), 10.0);
}

TEST_F(RendezvousGarbage, HelloWithWrongSecret) {
  weft::Hello h{};
  h.magic = weft::kWireMagic;
  h.version = weft::kWireVersion;
  h.kind = weft::kHelloRoot;
  std::memset(h.secret, 0xab, sizeof(h.secret));
  h.rank = 0;
  h.nranks = 2;
  h.listen = weft::toWire(root_);
  int fd = dial(root_);
  ASSERT_GE(fd, 0);
  sendBytes(fd, &h, sizeof(h));
  // An impostor claiming rank 0 must neither take rank 0's place nor learn the table.
  EXPECT_LT(initTwoRanks(id_), 10.0);
  close(fd);
}

TEST_F(RendezvousGarbage, SilentStrangersDoNotDelay) {
  // Half a Hello, then silence; and several connections that never say a
  // word. The root reads Hellos from all connections at once, so none of them
  // holds up the good ranks (admitted one at a time, they cost 5 s each).
  int half = dial(root_);
  ASSERT_GE(half, 0);
  char part[7] = {'W', 'E', 'F', 'T', 0, 1, 0};
  sendBytes(half, part, sizeof(part));
  std::vector<int> silent;
  for (int i = 0; i < 6; ++i) {
    int fd = dial(root_);
    ASSERT_GE(fd, 0);
    silent.push_back(fd);
  }
  EXPECT_LT(initTwoRanks(id_), 4.0);
  close(half);
  for (int fd : silent) close(fd);
}

// Every rank's bootstrap listener reads Hellos through the same gate: a good
// Hello passes at once although silent and half-Hello connections came first.
// A listener on loopback for a gate: its descriptor, and where it listens in *bound.
int listenLoopback(weft::SockAddr* bound) {
  weft::SockAddr local;
  std::string why;
  int listenFd = -1;
  if (!weft::parseHostPort("127.0.0.1:0", &local, &why) ||
      weft::listenOn(local, &listenFd, bound) != weftSuccess)
    return -1;
  return listenFd;
}

TEST(HelloGate, GoodHelloPassesSilentStrangers) {
  weft::SockAddr bound;
  const int listenFd = listenLoopback(&bound);
  ASSERT_GE(listenFd, 0) << weftGetLastError(nullptr);
  weft::HelloGate gate(listenFd);
  std::vector<int> strangers;
  for (int i = 0; i < 5; ++i) strangers.push_back(dial(bound));
  char part[5] = {'W', 'E', 'F', 'T', 0};
  sendBytes(strangers[0], part, sizeof(part));
  weft::Hello good{};
  good.magic = weft::kWireMagic;
  good.rank = 7;
  int fd = dial(bound);
  ASSERT_GE(fd, 0);
  sendBytes(fd, &good, sizeof(good));
  std::vector<std::pair<int, weft::Hello>> ready;
  Clock::time_point start = Clock::now();
  while (ready.empty() && Clock::now() - start < std::chrono::seconds(3))
    ASSERT_EQ(gate.poll(50, &ready), weftSuccess);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].second.rank, 7);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
  close(ready[0].first);
  close(fd);
  for (int s : strangers) close(s);
  close(listenFd);
}

// More real ranks than the gate holds connect at once, each sending its
// Hello at once (a large job's peers all dial each rank's listener as it
// starts): every one passes, none is dropped for the gate being full.
TEST(HelloGate, AWholeBacklogOfHellosPasses) {
  weft::SockAddr bound;
  const int listenFd = listenLoopback(&bound);
  ASSERT_GE(listenFd, 0) << weftGetLastError(nullptr);
  weft::HelloGate gate(listenFd);
  const int n = static_cast<int>(weft::HelloGate::kMaxPending) + 100;
  std::vector<int> dialed;
  for (int i = 0; i < n; ++i) {
    weft::Hello hello{};
    hello.magic = weft::kWireMagic;
    hello.rank = i;
    const int fd = dial(bound);
    ASSERT_GE(fd, 0);
    sendBytes(fd, &hello, sizeof(hello));
    dialed.push_back(fd);
  }
  std::vector<std::pair<int, weft::Hello>> ready;
  const Clock::time_point start = Clock::now();
  while (ready.size() < dialed.size() && Clock::now() - start < std::chrono::seconds(3))
    ASSERT_EQ(gate.poll(50, &ready), weftSuccess);
  EXPECT_EQ(ready.size(), dialed.size());
  std::vector<bool> seen(n, false);
  for (const auto& [fd, hello] : ready) {
    if (hello.rank >= 0 && hello.rank < n) seen[hello.rank] = true;
    close(fd);
  }
  for (int i = 0; i < n; ++i) EXPECT_TRUE(seen[i]) << "rank " << i << "'s Hello was dropped";
  for (int fd : dialed) close(fd);
  close(listenFd);
}

}  // namespace
