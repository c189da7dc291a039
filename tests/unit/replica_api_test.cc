// The replica C API on in-process communicators: every bad argument gets a
// sentence naming it, and a commit / change / restore round trip on three
// ranks brings every buffer back to the committed version.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include <cstring>
#include <thread>
#include <vector>

#include "single_rank_comm.h"

namespace {

using weft_test::failedWith;

class Replica3 : public ::testing::Test {
 protected:
  static constexpr int kRanks = 3;
  void SetUp() override {
    ASSERT_EQ(weftCommInitAll(comms_, kRanks, nullptr), weftSuccess) << weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r) buffers_[r].assign(1000, r + 1);
  }
  void TearDown() override {
    for (weftReplica_t rep : replicas_)
      if (rep != nullptr) weftReplicaDeregister(rep);
    for (weftComm_t c : comms_)
      if (c != nullptr) weftCommDestroy(c);
  }
  void registerAll(int copies) {
    for (int r = 0; r < kRanks; ++r)
      ASSERT_EQ(weftReplicaRegister(comms_[r], buffers_[r].data(), buffers_[r].size() * 8, copies,
                                    &replicas_[r]),
                weftSuccess)
          << weftGetLastError(nullptr);
  }
  // Commits on every rank from this thread (the work runs on each
  // communicator's progress thread), then waits for all.
  void commitAll() {
    weftRequest_t reqs[kRanks];
    for (int r = 0; r < kRanks; ++r)
      ASSERT_EQ(weftReplicaCommit(replicas_[r], &reqs[r]), weftSuccess)
          << weftGetLastError(nullptr);
    for (int r = 0; r < kRanks; ++r) ASSERT_EQ(weftWait(&reqs[r]), weftSuccess);
  }
  // Restores on every rank at once (a restore blocks); the results per rank.
  std::vector<weftResult_t> restoreAll(std::vector<uint64_t>* versions) {
    std::vector<weftResult_t> results(kRanks);
    versions->assign(kRanks, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back(
          [&, r] { results[r] = weftReplicaRestore(replicas_[r], nullptr, &(*versions)[r]); });
    for (auto& t : threads) t.join();
    return results;
  }
  weftComm_t comms_[kRanks] = {};
  weftReplica_t replicas_[kRanks] = {};
  std::vector<double> buffers_[kRanks];
};

TEST(ReplicaArgs, OneRankIsRefused) {
  weftUniqueId id;
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  ASSERT_EQ(weftCommInitRank(&comm, 1, id, 0), weftSuccess);
  double x = 0;
  weftReplica_t rep = nullptr;
  EXPECT_TRUE(failedWith(weftReplicaRegister(comm, &x, 8, 1, &rep), weftInvalidUsage, "2 or more"));
  EXPECT_EQ(rep, nullptr);
  weftCommDestroy(comm);
}

TEST_F(Replica3, BadArgumentsAreNamed) {
  double x = 0;
  weftReplica_t rep = nullptr;
  EXPECT_TRUE(
      failedWith(weftReplicaRegister(nullptr, &x, 8, 1, &rep), weftInvalidArgument, "comm"));
  EXPECT_TRUE(failedWith(weftReplicaRegister(comms_[0], nullptr, 8, 1, &rep), weftInvalidArgument,
                         "buffer is NULL"));
  EXPECT_TRUE(failedWith(weftReplicaRegister(comms_[0], &x, 0, 1, &rep), weftInvalidArgument,
                         "bytes is 0"));
  for (int copies : {0, 3, -1, WEFT_REPLICA_MAX_COPIES + 1})
    EXPECT_TRUE(failedWith(weftReplicaRegister(comms_[0], &x, 8, copies, &rep), weftInvalidArgument,
                           "copies"));
  EXPECT_TRUE(failedWith(weftReplicaRegister(comms_[0], &x, 8, 1, nullptr), weftInvalidArgument,
                         "replica is NULL"));
  weftRequest_t req = nullptr;
  EXPECT_TRUE(failedWith(weftReplicaCommit(nullptr, &req), weftInvalidArgument, "replica is NULL"));
  auto* bogus = reinterpret_cast<weftReplica_t>(&x);
  EXPECT_TRUE(failedWith(weftReplicaCommit(bogus, &req), weftInvalidArgument, "not a live"));
  uint64_t v = 0;
  EXPECT_TRUE(failedWith(weftReplicaVersion(bogus, &v), weftInvalidArgument, "not a live"));
  EXPECT_TRUE(failedWith(weftReplicaDeregister(bogus), weftInvalidArgument, "not a live"));
  registerAll(1);
  EXPECT_TRUE(failedWith(weftReplicaCommit(replicas_[0], nullptr), weftInvalidArgument, "request"));
  EXPECT_TRUE(failedWith(weftReplicaRestore(replicas_[0], nullptr, nullptr), weftInvalidArgument,
                         "version"));
  EXPECT_TRUE(
      failedWith(weftReplicaVersion(replicas_[0], nullptr), weftInvalidArgument, "version"));
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  EXPECT_TRUE(failedWith(weftReplicaCommit(replicas_[0], &req), weftInvalidUsage, "group"));
  ASSERT_EQ(weftGroupEnd(), weftSuccess);
  // A communicator of another size cannot take the replica.
  weftUniqueId id;
  weftComm_t one = nullptr;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  ASSERT_EQ(weftCommInitRank(&one, 1, id, 0), weftSuccess);
  EXPECT_TRUE(failedWith(weftReplicaRestore(replicas_[0], one, &v), weftInvalidUsage,
                         "registered on 3 ranks"));
  weftCommDestroy(one);
}

TEST_F(Replica3, RestoreBeforeAnyCommitRefusesOnEveryRank) {
  registerAll(1);
  std::vector<uint64_t> versions;
  for (weftResult_t r : restoreAll(&versions)) EXPECT_EQ(r, weftInvalidUsage);
}

TEST_F(Replica3, RestoreBringsBackTheLastCommit) {
  registerAll(2);
  commitAll();
  for (int r = 0; r < kRanks; ++r) buffers_[r].assign(1000, 10 * (r + 1));
  commitAll();  // version 2: 10, 20, 30
  uint64_t v = 0;
  ASSERT_EQ(weftReplicaVersion(replicas_[1], &v), weftSuccess);
  EXPECT_EQ(v, 2u);
  for (int r = 0; r < kRanks; ++r) buffers_[r].assign(1000, -1.0);  // work after the commit
  std::vector<uint64_t> versions;
  for (weftResult_t r : restoreAll(&versions))
    EXPECT_EQ(r, weftSuccess) << weftGetLastError(nullptr);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(versions[r], 2u);
    EXPECT_EQ(buffers_[r], std::vector<double>(1000, 10.0 * (r + 1))) << "rank " << r;
  }
  commitAll();  // commits go on after a restore: version 3
  ASSERT_EQ(weftReplicaVersion(replicas_[0], &v), weftSuccess);
  EXPECT_EQ(v, 3u);
  EXPECT_EQ(weftReplicaDeregister(replicas_[2]), weftSuccess);
  EXPECT_TRUE(failedWith(weftReplicaDeregister(replicas_[2]), weftInvalidArgument, "not a live"));
  replicas_[2] = nullptr;
}

}  // namespace
