// Replica placement and restore planning (core/replica_plan.h): copies on
// other nodes first, balanced holding, and the restore's choice of version,
// holders, refills and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/replica_plan.h"

namespace {

using weft::heldBy;
using weft::planRestore;
using weft::replicaBuddies;
using weft::ReplicaRecord;
using weft::RestorePlan;

std::vector<uint64_t> nodesOf(std::vector<int> sizes) {
  std::vector<uint64_t> nodes;
  for (size_t k = 0; k < sizes.size(); ++k)
    for (int i = 0; i < sizes[k]; ++i) nodes.push_back(100 + k);
  return nodes;
}

TEST(ReplicaBuddies, OneNodeEveryRankHoldsCopies) {
  const auto nodes = nodesOf({5});
  for (int copies = 1; copies <= 4; ++copies) {
    const auto buddies = replicaBuddies(nodes, copies);
    ASSERT_EQ(buddies.size(), 5u);
    for (int r = 0; r < 5; ++r) {
      EXPECT_EQ(static_cast<int>(buddies[r].size()), copies);
      EXPECT_EQ(std::count(buddies[r].begin(), buddies[r].end(), r), 0) << "a rank holds itself";
      EXPECT_EQ(static_cast<int>(heldBy(buddies, r).size()), copies) << "unbalanced at rank " << r;
    }
  }
}

TEST(ReplicaBuddies, CopiesGoToOtherNodes) {
  const auto nodes = nodesOf({4, 4});  // ranks 0-3 on one node, 4-7 on the other
  const auto buddies = replicaBuddies(nodes, 1);
  for (int r = 0; r < 8; ++r) {
    ASSERT_EQ(buddies[r].size(), 1u);
    EXPECT_NE(nodes[buddies[r][0]], nodes[r]) << "rank " << r << "'s copy is on its own node";
    EXPECT_EQ(heldBy(buddies, r).size(), 1u);
  }
  // Three nodes, two copies: both on other nodes.
  const auto three = nodesOf({2, 2, 2});
  const auto two = replicaBuddies(three, 2);
  for (int r = 0; r < 6; ++r)
    for (int b : two[r]) EXPECT_NE(three[b], three[r]) << "rank " << r << " -> " << b;
}

TEST(ReplicaBuddies, UnevenNodesStayBalanced) {
  const auto nodes = nodesOf({7, 1});
  const auto buddies = replicaBuddies(nodes, 1);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(buddies[r].size(), 1u);
    EXPECT_LE(heldBy(buddies, r).size(), 1u) << "rank " << r << " holds too many";
  }
  EXPECT_NE(nodes[buddies[7][0]], nodes[7]) << "the lone node's rank keeps its copy elsewhere";
}

TEST(ReplicaBuddies, RefusesImpossibleCopies) {
  EXPECT_TRUE(replicaBuddies(nodesOf({1}), 1).empty());
  EXPECT_TRUE(replicaBuddies(nodesOf({3}), 3).empty());
  EXPECT_TRUE(replicaBuddies(nodesOf({3}), 0).empty());
}

// Records of n ranks that all committed `version` (and the one before it),
// placed by `buddies`, every buffer `bytes` long.
std::vector<ReplicaRecord> committed(const std::vector<std::vector<int>>& buddies, uint64_t version,
                                     uint64_t bytes) {
  const int n = static_cast<int>(buddies.size());
  std::vector<ReplicaRecord> records(n);
  for (int r = 0; r < n; ++r) {
    ReplicaRecord& rec = records[r];
    std::memset(&rec, 0, sizeof(rec));
    rec.lastComplete = version;
    rec.bytes = bytes;
    rec.copies = static_cast<int32_t>(buddies[0].size());
    rec.local[version % 2] = version;
    rec.local[(version + 1) % 2] = version - 1;
    for (int owner : heldBy(buddies, r)) {
      auto& h = rec.held[rec.nheld++];
      h.owner = owner;
      h.bytes = bytes;
      h.version[version % 2] = version;
      h.version[(version + 1) % 2] = version - 1;
    }
  }
  return records;
}

// A standby in `rank`'s place: it holds nothing.
void replaceWithStandby(std::vector<ReplicaRecord>* records, int rank) {
  ReplicaRecord& rec = (*records)[rank];
  const int copies = rec.copies;
  const uint64_t bytes = rec.bytes;
  std::memset(&rec, 0, sizeof(rec));
  rec.copies = copies;
  rec.bytes = bytes;
}

TEST(ReplicaRestore, AStandbyFetchesAndRefills) {
  const auto nodes = nodesOf({4});
  const auto buddies = replicaBuddies(nodes, 1);
  auto records = committed(buddies, 7, 4096);
  replaceWithStandby(&records, 2);
  const RestorePlan plan = planRestore(records, buddies, nodes);
  ASSERT_EQ(plan.problem, "");
  EXPECT_EQ(plan.version, 7u);
  EXPECT_EQ(plan.local.size(), 3u);
  ASSERT_EQ(plan.fetch.size(), 1u);
  EXPECT_EQ(plan.fetch[0].to, 2);
  EXPECT_EQ(plan.fetch[0].from, buddies[2][0]);
  // The standby held a copy for one owner: that owner sends it again.
  ASSERT_EQ(plan.refill.size(), 1u);
  EXPECT_EQ(plan.refill[0].to, 2);
  EXPECT_EQ(plan.refill[0].from, heldBy(buddies, 2)[0]);
}

TEST(ReplicaRestore, TakesTheNewestVersionAnyRankSawComplete) {
  const auto nodes = nodesOf({4});
  const auto buddies = replicaBuddies(nodes, 1);
  auto records = committed(buddies, 5, 64);
  records[1].lastComplete = 4;  // rank 1 did not see version 5's last step
  replaceWithStandby(&records, 3);
  const RestorePlan plan = planRestore(records, buddies, nodes);
  ASSERT_EQ(plan.problem, "");
  EXPECT_EQ(plan.version, 5u);
  // Nobody saw 5 complete: everyone goes back to 4, which every copy still has.
  for (auto& rec : records) rec.lastComplete = std::min<uint64_t>(rec.lastComplete, 4);
  EXPECT_EQ(planRestore(records, buddies, nodes).version, 4u);
}

TEST(ReplicaRestore, RefusesALostVersionAlike) {
  const auto nodes = nodesOf({4});
  const auto buddies = replicaBuddies(nodes, 1);
  auto records = committed(buddies, 3, 64);
  replaceWithStandby(&records, 1);
  replaceWithStandby(&records, buddies[1][0]);  // rank 1 and its only copy's holder
  const RestorePlan plan = planRestore(records, buddies, nodes);
  EXPECT_NE(plan.problem.find("rank 1's version 3 is lost"), std::string::npos) << plan.problem;
}

TEST(ReplicaRestore, RefusesWithNothingCommittedOrDifferentCopies) {
  const auto nodes = nodesOf({3});
  const auto buddies = replicaBuddies(nodes, 1);
  auto records = committed(buddies, 1, 64);
  for (auto& rec : records) rec.lastComplete = 0;
  EXPECT_NE(planRestore(records, buddies, nodes).problem.find("no version"), std::string::npos);
  records = committed(buddies, 2, 64);
  records[2].copies = 2;
  EXPECT_NE(planRestore(records, buddies, nodes).problem.find("different copies"),
            std::string::npos);
}

TEST(ReplicaRestore, PrefersAHolderOnTheOwnersNode) {
  // Two nodes of two, copies 3: two on the other node, one on the own node.
  const auto nodes = nodesOf({2, 2});
  const auto buddies = replicaBuddies(nodes, 3);
  auto records = committed(buddies, 9, 64);
  replaceWithStandby(&records, 0);
  const RestorePlan plan = planRestore(records, buddies, nodes);
  ASSERT_EQ(plan.problem, "");
  ASSERT_EQ(plan.fetch.size(), 1u);
  EXPECT_EQ(nodes[plan.fetch[0].from], nodes[0]);
}

}  // namespace
