// The node verdict of base/cpu_share.h: how many CPUs a node's ranks share,
// from their affinity masks and cgroup quotas, and when they are too few.
#include "base/cpu_share.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <vector>

namespace {

using weft::CpuShare;

// A share whose mask holds CPUs [first, first + count).
CpuShare cpus(int first, int count, int quota = 0) {
  CpuShare s{};
  for (int c = first; c < first + count; ++c) s.mask[c / 64] |= uint64_t{1} << (c % 64);
  s.quotaCpus = quota;
  return s;
}

TEST(CpuQuota, ParsesCgroupFiles) {
  EXPECT_EQ(weft::quotaCpusFromCpuMax("max 100000"), 0);
  EXPECT_EQ(weft::quotaCpusFromCpuMax("200000 100000"), 2);
  EXPECT_EQ(weft::quotaCpusFromCpuMax("150000 100000"), 2);  // 1.5 CPUs: rounded up
  EXPECT_EQ(weft::quotaCpusFromCpuMax("50000 100000"), 1);
  EXPECT_EQ(weft::quotaCpusFromCpuMax(""), 0);
  EXPECT_EQ(weft::quotaCpusFromCpuMax("200000"), 0);
  EXPECT_EQ(weft::quotaCpusFromCpuMax("x 100000"), 0);
  EXPECT_EQ(weft::quotaCpusFromV1("-1", "100000"), 0);
  EXPECT_EQ(weft::quotaCpusFromV1("400000", "100000"), 4);
  EXPECT_EQ(weft::quotaCpusFromV1("400000", "0"), 0);
}

TEST(NodeCpus, CountsTheUnionOfTheNodesMasks) {
  // 4 ranks, unpinned, on a 2-CPU node: oversubscribed.
  std::vector<uint64_t> nodes(4, 7);
  std::vector<CpuShare> shares(4, cpus(0, 2));
  weft::NodeCpus v = weft::judgeNodeCpus(nodes, shares, 1);
  EXPECT_EQ(v.ranks, 4);
  EXPECT_EQ(v.cpus, 2);
  EXPECT_TRUE(v.oversubscribed);
  // Each pinned to a CPU of its own: 4 CPUs, not oversubscribed.
  for (int r = 0; r < 4; ++r) shares[r] = cpus(r, 1);
  v = weft::judgeNodeCpus(nodes, shares, 0);
  EXPECT_EQ(v.cpus, 4);
  EXPECT_FALSE(v.oversubscribed);
  // Two of them pinned to one CPU: 3 CPUs for 4 ranks.
  shares[3] = cpus(2, 1);
  EXPECT_TRUE(weft::judgeNodeCpus(nodes, shares, 0).oversubscribed);
  // CPUs above 64 count too.
  for (int r = 0; r < 4; ++r) shares[r] = cpus(100 + 2 * r, 2);
  EXPECT_EQ(weft::judgeNodeCpus(nodes, shares, 0).cpus, 8);
}

TEST(NodeCpus, OnlyTheRanksOfOurNodeCount) {
  // Node 1 has 2 ranks on 2 CPUs; node 2 has 3 ranks on 1 CPU.
  std::vector<uint64_t> nodes = {1, 2, 1, 2, 2};
  std::vector<CpuShare> shares = {cpus(0, 2), cpus(0, 1), cpus(0, 2), cpus(0, 1), cpus(0, 1)};
  weft::NodeCpus v = weft::judgeNodeCpus(nodes, shares, 0);
  EXPECT_EQ(v.ranks, 2);
  EXPECT_FALSE(v.oversubscribed);
  v = weft::judgeNodeCpus(nodes, shares, 3);
  EXPECT_EQ(v.ranks, 3);
  EXPECT_EQ(v.cpus, 1);
  EXPECT_TRUE(v.oversubscribed);
}

TEST(NodeCpus, AQuotaCapsTheMask) {
  // A container limited to 2 CPUs on a 64-CPU host, 4 ranks.
  std::vector<uint64_t> nodes(4, 3);
  std::vector<CpuShare> shares(4, cpus(0, 64, 2));
  weft::NodeCpus v = weft::judgeNodeCpus(nodes, shares, 2);
  EXPECT_EQ(v.cpus, 2);
  EXPECT_TRUE(v.oversubscribed);
  // A rank without a quota: the quota is not the node's limit.
  shares[1].quotaCpus = 0;
  v = weft::judgeNodeCpus(nodes, shares, 2);
  EXPECT_EQ(v.cpus, 64);
  EXPECT_FALSE(v.oversubscribed);
}

TEST(NodeCpus, UnknownMasksAssumeNoLimit) {
  std::vector<uint64_t> nodes(8, 5);
  std::vector<CpuShare> shares(8, cpus(0, 2));
  shares[6] = CpuShare{};  // this rank could not read its mask
  weft::NodeCpus v = weft::judgeNodeCpus(nodes, shares, 0);
  EXPECT_EQ(v.cpus, 0);
  EXPECT_FALSE(v.oversubscribed);
}

TEST(NodeCpus, AVerdictSeenByAnyRankOfTheNodeHolds) {
  // A communicator split from an oversubscribed one: 2 ranks on 2 CPUs,
  // but one of them knows the node runs more.
  std::vector<uint64_t> nodes(2, 9);
  std::vector<CpuShare> shares(2, cpus(0, 2));
  EXPECT_FALSE(weft::judgeNodeCpus(nodes, shares, 0).oversubscribed);
  shares[1].oversubscribedSeen = 1;
  EXPECT_TRUE(weft::judgeNodeCpus(nodes, shares, 0).oversubscribed);
}

TEST(CpuShareRead, MatchesThisThreadsAffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const CpuShare share = weft::readCpuShare();
  int bits = 0;
  for (uint64_t w : share.mask) bits += __builtin_popcountll(w);
  EXPECT_EQ(bits, CPU_COUNT(&set));
  EXPECT_GE(share.quotaCpus, 0);
  EXPECT_EQ(share.oversubscribedSeen, 0);  // nothing judged yet in this process
  weft::noteOversubscribed();
  EXPECT_EQ(weft::readCpuShare().oversubscribedSeen, 1);
}

}  // namespace
