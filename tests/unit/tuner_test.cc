// Checks the tuner's cost model (collectives/tuner.h) on made-up topologies:
// where the model must prefer the tree (latency-bound, many nodes), the
// hierarchical form (bandwidth-bound, several ranks per node), recursive
// doubling (mid sizes over slow links), and where a form does not apply (one node, nodes of
// different sizes); and that a pick is the cheapest prediction, with a chunk within bounds, at
// every size.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/tuner.h"

namespace {

// A topology of `perNode` ranks on each node, seen from rank 0 (no channels).
weft::CommTopo layout(const std::vector<int>& perNode) {
  std::vector<uint64_t> hashes;
  for (size_t node = 0; node < perNode.size(); ++node)
    for (int i = 0; i < perNode[node]; ++i) hashes.push_back(1000 + node);
  weft::CommTopo t;
  t.build(0, hashes, nullptr);
  return t;
}

const weft::LinkModel kShm{2.0, 4.0};
const weft::LinkModel kWan{200.0, 0.125};  // 1 Gbit/s, 200 us

weft::Tuner tuner(const weft::CommTopo& t) {
  weft::Tuner tu;
  tu.setup(&t, kShm, kWan, 256 << 10, 1, 2 << 20);
  return tu;
}

TEST(Tuner, TreeBeatsRingForTinyMessagesAcrossManyNodes) {
  weft::CommTopo t = layout({1, 1, 1, 1, 1, 1, 1, 1});
  weft::Tuner tu = tuner(t);
  double ring = tu.allReduceUs(weft::AlgoId::kRing, 8, nullptr);
  double tree = tu.allReduceUs(weft::AlgoId::kTree, 8, nullptr);
  EXPECT_LT(tree, 0.6 * ring);
  weft::AlgoChoice c = tu.pickAllReduce(8);
  EXPECT_NE(c.algo, weft::AlgoId::kRing);
}

TEST(Tuner, HierarchicalForLargeMessagesOnMultiRankNodes) {
  // 4 ranks per node: a node link carries S (hier) instead of 1.75 S (ring).
  // Between two nodes recursive doubling or halving-doubling after the node's
  // reduce-scatter also carries S.
  weft::CommTopo t = layout({4, 4});
  weft::Tuner tu = tuner(t);
  weft::AlgoChoice c = tu.pickAllReduce(64 << 20);
  EXPECT_TRUE(c.algo == weft::AlgoId::kHierRing || c.algo == weft::AlgoId::kHierTree ||
              c.algo == weft::AlgoId::kRd || c.algo == weft::AlgoId::kRhd)
      << weft::algoName(c.algo);
  EXPECT_EQ(tu.pickAllGather(16 << 20).algo, weft::AlgoId::kHierRing);
}

TEST(Tuner, HierarchicalOnlyWhereItApplies) {
  for (auto shape : {std::vector<int>{4}, std::vector<int>{2, 1}, std::vector<int>{1, 1, 1}}) {
    weft::CommTopo t = layout(shape);
    weft::Tuner tu = tuner(t);
    EXPECT_FALSE(tu.allReduceUs(weft::AlgoId::kHierRing, 1 << 20, nullptr) < 1e300);
    EXPECT_NE(tu.pickAllReduce(64 << 20).algo, weft::AlgoId::kHierRing);
  }
}

TEST(Tuner, PickIsTheCheapestPrediction) {
  weft::CommTopo t = layout({2, 2, 2, 2});
  weft::Tuner tu = tuner(t);
  for (size_t b = 8; b <= (256u << 20); b *= 2) {
    weft::AlgoChoice c = tu.pickAllReduce(b);
    for (weft::AlgoId a :
         {weft::AlgoId::kOneshot, weft::AlgoId::kRing, weft::AlgoId::kTree, weft::AlgoId::kHierRing,
          weft::AlgoId::kHierTree, weft::AlgoId::kRd, weft::AlgoId::kRhd})
      EXPECT_LE(c.predictedUs, tu.allReduceUs(a, b, nullptr)) << b << " B";
    EXPECT_GE(c.chunkBytes, weft::Tuner::kMinChunk);
    EXPECT_LE(c.chunkBytes, static_cast<size_t>(256 << 10));
  }
}

TEST(Tuner, RecursiveDoublingForMidSizesAcrossSlowLinks) {
  // 4 nodes x 2: one round's node link carries 12 copies, the rings 6 hops of
  // 200 us; doubling takes 2 hops carrying one copy each.
  weft::CommTopo t = layout({2, 2, 2, 2});
  weft::Tuner tu = tuner(t);
  EXPECT_EQ(tu.pickAllReduce(32 << 10).algo, weft::AlgoId::kRd);
  EXPECT_EQ(tu.pickAllReduce(8).algo, weft::AlgoId::kOneshot);
  EXPECT_NE(tu.pickAllReduce(64 << 20).algo, weft::AlgoId::kRd);
  // 8 one-rank nodes: 3 hops against the tree's 6.
  weft::CommTopo flat = layout({1, 1, 1, 1, 1, 1, 1, 1});
  weft::Tuner tf = tuner(flat);
  EXPECT_LT(tf.allReduceUs(weft::AlgoId::kRd, 8 << 10, nullptr),
            tf.allReduceUs(weft::AlgoId::kTree, 8 << 10, nullptr));
}

TEST(Tuner, RecursiveDoublingWhereNodesAreAlikeOrSingleRanks) {
  // Folding a node count that is not a power of two costs two more steps.
  weft::CommTopo three = layout({2, 2, 2}), four = layout({2, 2, 2, 2});
  weft::Tuner t3 = tuner(three), t4 = tuner(four);
  EXPECT_GT(t3.allReduceUs(weft::AlgoId::kRd, 32 << 10, nullptr),
            t4.allReduceUs(weft::AlgoId::kRd, 32 << 10, nullptr));
  EXPECT_LT(tuner(layout({1, 1, 1})).allReduceUs(weft::AlgoId::kRd, 1024, nullptr), 1e300);
  EXPECT_FALSE(tuner(layout({2, 1})).allReduceUs(weft::AlgoId::kRd, 1024, nullptr) < 1e300);
}

TEST(Tuner, HalvingDoublingBetweenDoublingAndRings) {
  // 4 nodes x 2 at 128 KiB: the doubling's 2 copies on each node link cost
  // more than the halving-doubling's 4 hops, which the rings' 6 hops exceed.
  weft::CommTopo t = layout({2, 2, 2, 2});
  weft::Tuner tu = tuner(t);
  const double rhd = tu.allReduceUs(weft::AlgoId::kRhd, 128 << 10, nullptr);
  EXPECT_LT(rhd, tu.allReduceUs(weft::AlgoId::kRd, 128 << 10, nullptr));
  EXPECT_LT(rhd, tu.allReduceUs(weft::AlgoId::kHierRing, 128 << 10, nullptr));
  EXPECT_EQ(tu.pickAllReduce(128 << 10).algo, weft::AlgoId::kRhd);
  // Not where nodes differ in size and hold several ranks.
  EXPECT_FALSE(tuner(layout({2, 1})).allReduceUs(weft::AlgoId::kRhd, 1024, nullptr) < 1e300);
}

TEST(Tuner, OneshotNeedsStagingForEveryRank) {
  weft::CommTopo t = layout({1, 1, 1, 1});
  weft::Tuner tu = tuner(t);  // 2 MiB of staging: 4 ranks x 512 KiB at most
  EXPECT_LT(tu.allReduceUs(weft::AlgoId::kOneshot, 512 << 10, nullptr), 1e300);
  EXPECT_FALSE(tu.allReduceUs(weft::AlgoId::kOneshot, (512 << 10) + 1, nullptr) < 1e300);
}

}  // namespace
