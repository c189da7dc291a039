// Checks weftCommInitAll: three ranks in one process, one thread per
// communicator, running allreduce and allgather concurrently (several sizes so
// both the one-round and the ring algorithms run) must give every rank the
// right result. This is the single-process path frameworks use for tests.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include "base/fd_limit.h"
#include "core/comm.h"
#include "transports/tcp/tcp_transport.h"

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRanks = 3;

// Rank r's input at index i (integers: sums are exact in float).
float inputOf(int r, size_t i) {
  return static_cast<float>((i * 5 + static_cast<size_t>(r) * 11) % 23) - 11.0f;
}

std::string runRank(weftComm_t comm) {
  int rank = -1, n = 0;
  if (weftCommUserRank(comm, &rank) != weftSuccess || weftCommCount(comm, &n) != weftSuccess)
    return "query failed";
  if (n != kRanks) return "count is " + std::to_string(n);
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{300007}}) {
    std::vector<float> in(count), out(count, -999.0f);
    for (size_t i = 0; i < count; ++i) in[i] = inputOf(rank, i);
    if (weftAllReduce(in.data(), out.data(), count, weftFloat, weftSum, comm, nullptr) !=
        weftSuccess)
      return "allreduce " + std::to_string(count) + ": " + weftGetLastError(nullptr);
    for (size_t i = 0; i < count; ++i) {
      float want = inputOf(0, i) + inputOf(1, i) + inputOf(2, i);
      if (out[i] != want)
        return "allreduce count " + std::to_string(count) + " index " + std::to_string(i) + ": " +
               std::to_string(out[i]) + " != " + std::to_string(want);
    }
    std::vector<int64_t> piece(count), all(count * kRanks, -1);
    for (size_t i = 0; i < count; ++i) piece[i] = rank * 1000000007LL + static_cast<int64_t>(i);
    if (weftAllGather(piece.data(), all.data(), count, weftInt64, comm, nullptr) != weftSuccess)
      return "allgather " + std::to_string(count) + ": " + weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r)
      for (size_t i = 0; i < count; ++i)
        if (all[r * count + i] != r * 1000000007LL + static_cast<int64_t>(i))
          return "allgather count " + std::to_string(count) + " rank " + std::to_string(r) +
                 " index " + std::to_string(i);
  }
  return "";
}

TEST(CommInitAll, ThreeRanksInOneProcess) {
  weftComm_t comms[kRanks] = {nullptr, nullptr, nullptr};
  ASSERT_EQ(weftCommInitAll(comms, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_NE(comms[r], nullptr);
    int rank = -1;
    ASSERT_EQ(weftCommUserRank(comms[r], &rank), weftSuccess);
    EXPECT_EQ(rank, r);
  }
  std::string errors[kRanks];
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) threads.emplace_back([&, r] { errors[r] = runRank(comms[r]); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  for (int r = 0; r < kRanks; ++r) {
    weftResult_t async = weftInternalError;
    EXPECT_EQ(weftCommGetAsyncError(comms[r], &async), weftSuccess);
    EXPECT_EQ(async, weftSuccess);
    EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess) << weftGetLastError(nullptr);
  }
}

TEST(CommInitAll, OneRank) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitAll(&comm, 1, nullptr), weftSuccess) << weftGetLastError(nullptr);
  double x = 2.5, y = 0;
  EXPECT_EQ(weftAllReduce(&x, &y, 1, weftDouble, weftProd, comm, nullptr), weftSuccess);
  EXPECT_EQ(y, 2.5);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

// Three ranks over TCP (shared memory off), once per socket layout: each must
// give right results, and the mesh must hold the sockets the layout promises:
// none after init (WEFT_TUNE_SHM set: no link is measured there); per peer and
// stream, the shared one once a call met the peer, and WEFT_SOCKET_LANES per
// direction once large calls have used the peer, unless
// WEFT_SOCKET_PER_DIRECTION is 0. With 64K, calls of 4 B-4 KiB per rank share
// one connection and those of 1.2 MiB go striped over the lanes; with 1,
// every call goes over the lanes. After init: this process's new descriptors
// since before init, so the bootstrap's own (the same in every layout) cancel
// out. Once the calls ran: the connections each rank's transport holds (a
// connection that lost the race to be a pair's connection A may still wait,
// closed by its peer, among the bootstrap's arrivals: not a connection).
TEST(CommInitAll, TcpStreamsHaveLanesPerDirectionUnlessTurnedOff) {
  struct Layout {
    const char* perDirection;
    const char* nstreams;
    const char* lanes;
    long inUse;  // sockets to the 2 peers once the calls ran: connection A per
                 // stream used, and the lanes (both peers are ring neighbours)
  };
  // With WEFT_SOCKET_PER_DIRECTION=1 every call's data goes over the lanes, so
  // only stream 0's connection A (the call headers) is ever made.
  const Layout layouts[] = {{"64K", "1", "2", 10}, {"0", "1", "2", 2},   {"1", "2", "2", 18},
                            {"0", "3", "4", 6},    {"64K", "1", "1", 6}, {"1", "1", "3", 14}};
  constexpr int kLayouts = sizeof(layouts) / sizeof(layouts[0]);
  setenv("WEFT_SHM_DISABLE", "1", 1);
  setenv("WEFT_TUNE_SHM", "2,4", 1);
  long opened[kLayouts] = {}, used[kLayouts] = {};
  for (int l = 0; l < kLayouts; ++l) {
    setenv("WEFT_SOCKET_PER_DIRECTION", layouts[l].perDirection, 1);
    setenv("WEFT_SOCKET_NSTREAMS", layouts[l].nstreams, 1);
    setenv("WEFT_SOCKET_LANES", layouts[l].lanes, 1);
    const long before = static_cast<long>(weft::openFdCount());
    weftComm_t comms[kRanks] = {nullptr, nullptr, nullptr};
    ASSERT_EQ(weftCommInitAll(comms, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
    opened[l] = static_cast<long>(weft::openFdCount()) - before;
    std::string errors[kRanks];
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] { errors[r] = runRank(comms[r]); });
    for (auto& t : threads) t.join();
    for (int r = 0; r < kRanks; ++r) used[l] += comms[r]->tcp->openConnections();
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(errors[r], "") << "layout " << l << " rank " << r;
      EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess) << weftGetLastError(nullptr);
    }
  }
  unsetenv("WEFT_SOCKET_PER_DIRECTION");
  unsetenv("WEFT_SOCKET_NSTREAMS");
  unsetenv("WEFT_SOCKET_LANES");
  unsetenv("WEFT_SHM_DISABLE");
  unsetenv("WEFT_TUNE_SHM");
  // Each process-wide socket of the mesh is one descriptor: both ends live here.
  for (int l = 0; l < kLayouts; ++l) {
    EXPECT_EQ(opened[l], opened[0])
        << "layout " << l << ": " << opened[l] << " descriptors after init against " << opened[0];
    EXPECT_EQ(used[l], kRanks * layouts[l].inUse)
        << "layout " << l << ": " << used[l] << " connections in use";
  }
}

// A rank whose large call waits for a peer's lanes (they open on first use,
// and the peer is late to the call) sleeps on its listener rather than
// spinning a core: the process's CPU time over the peer's 600 ms of lateness
// stays far below the wall time.
TEST(CommInitAll, RankWaitingForItsLanesSleeps) {
  setenv("WEFT_SHM_DISABLE", "1", 1);
  weftComm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(weftCommInitAll(comms, 2, nullptr), weftSuccess) << weftGetLastError(nullptr);
  unsetenv("WEFT_SHM_DISABLE");
  const size_t count = 1 << 20;  // 4 MiB: over the lanes
  std::vector<float> in[2], out[2];
  for (int r = 0; r < 2; ++r) {
    in[r].assign(count, static_cast<float>(r + 1));
    out[r].assign(count, 0.0f);
  }
  weftResult_t got[2] = {weftInternalError, weftInternalError};
  auto call = [&](int r) {
    got[r] =
        weftAllReduce(in[r].data(), out[r].data(), count, weftFloat, weftSum, comms[r], nullptr);
  };
  timespec cpu0{}, cpu1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  const auto wall0 = std::chrono::steady_clock::now();
  std::thread higher(call, 1);  // rank 1 takes the lanes rank 0 opens
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::thread lower(call, 0);
  higher.join();
  lower.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r], weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(out[r][0], 3.0f);
    EXPECT_EQ(out[r][count - 1], 3.0f);
    EXPECT_EQ(weftCommDestroy(comms[r]), weftSuccess);
  }
  const double cpu = (cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
  EXPECT_LT(cpu, 0.25 * wall) << cpu << " s of CPU in " << wall << " s";
}

}  // namespace
