// The ring view keeps each node's ranks together, and where every rank of a
// node has a GPU ring key (topo::ringOrder position) it visits them in key
// order; a node with any unknown key keeps rank order.
#include <gtest/gtest.h>

#include "collectives/comm_topo.h"

namespace {

std::vector<int> ringOf(const weft::CommTopo& t) {
  std::vector<int> out;
  for (int i = 0; i < t.ring->size(); ++i) out.push_back(t.ring->member(i));
  return out;
}

TEST(CommTopoRing, NodesTogetherInRankOrderWithoutKeys) {
  weft::CommTopo t;
  t.build(2, {7, 9, 7, 9}, nullptr);
  EXPECT_EQ(ringOf(t), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(t.ringPos, 1);
}

TEST(CommTopoRing, GpuKeysOrderANodeWhereAllAreKnown) {
  weft::CommTopo t;
  // Node 7: ranks 0-3 with keys 3,1,2,0; node 9: ranks 4-5, one key unknown.
  t.build(0, {7, 7, 7, 7, 9, 9}, nullptr, {3, 1, 2, 0, 1, -1});
  EXPECT_EQ(ringOf(t), (std::vector<int>{3, 1, 2, 0, 4, 5}));
  EXPECT_EQ(t.ringPos, 3);
  // Intra and node views stay in rank order.
  EXPECT_EQ(t.nodeRanks[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.localIndex, 0);
}

}  // namespace
