// Checks the double binary tree (collectives/tree_schedule.h) for n = 1..100:
// each tree spans every position once from a single root (parent and child
// links agree, no cycle), its depth stays within ceil(log2 n) + 1, and no
// position has children in both trees except position 0 for odd n (the
// one-child root of tree 0), which is what halves the trees' per-rank load.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/tree_schedule.h"

namespace {

int ceilLog2(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

void expectTree(int n, int which) {
  std::vector<weft::TreeLinks> t = weft::doubleBtree(n, which);
  ASSERT_EQ(static_cast<int>(t.size()), n);
  int roots = 0, root = -1;
  for (int p = 0; p < n; ++p) {
    if (t[p].parent < 0) {
      ++roots;
      root = p;
    } else {
      const weft::TreeLinks& up = t[t[p].parent];
      EXPECT_TRUE(up.child[0] == p || up.child[1] == p)
          << "n=" << n << " tree " << which << " p=" << p;
    }
    if (t[p].child[1] >= 0) {
      EXPECT_GE(t[p].child[0], 0);
    }
    for (int c : t[p].child) {
      if (c >= 0) {
        EXPECT_EQ(t[c].parent, p) << "n=" << n << " tree " << which << " p=" << p;
      }
    }
  }
  ASSERT_EQ(roots, 1) << "n=" << n << " tree " << which;
  // Walk from the root: every position reached exactly once, depth bounded.
  std::vector<int> depth(n, -1);
  std::vector<int> stack{root};
  depth[root] = 0;
  int seen = 0, maxDepth = 0;
  while (!stack.empty()) {
    int p = stack.back();
    stack.pop_back();
    ++seen;
    maxDepth = std::max(maxDepth, depth[p]);
    for (int c : t[p].child) {
      if (c < 0) continue;
      ASSERT_EQ(depth[c], -1) << "n=" << n << " tree " << which << ": " << c << " reached twice";
      depth[c] = depth[p] + 1;
      stack.push_back(c);
    }
  }
  EXPECT_EQ(seen, n) << "n=" << n << " tree " << which;
  EXPECT_LE(maxDepth, ceilLog2(n) + 1) << "n=" << n << " tree " << which;
}

TEST(TreeSchedule, BothTreesSpanAllPositions) {
  for (int n = 1; n <= 100; ++n) {
    expectTree(n, 0);
    expectTree(n, 1);
  }
}

TEST(TreeSchedule, InteriorInAtMostOneTree) {
  for (int n = 2; n <= 100; ++n) {
    std::vector<weft::TreeLinks> t0 = weft::doubleBtree(n, 0), t1 = weft::doubleBtree(n, 1);
    for (int p = 0; p < n; ++p) {
      bool both = t0[p].nchildren() > 0 && t1[p].nchildren() > 0;
      if (n % 2 == 1 && p == 0) {
        EXPECT_EQ(t0[p].nchildren(), 1) << "n=" << n;  // the root of tree 0 has one child
        continue;
      }
      EXPECT_FALSE(both) << "n=" << n << ": position " << p << " is interior in both trees";
    }
  }
}

TEST(TreeSchedule, SmallShapes) {
  // n = 4: tree 0 is 0 -> 2 -> {1, 3}; tree 1 mirrors it: 3 -> 1 -> {2, 0}.
  std::vector<weft::TreeLinks> t0 = weft::doubleBtree(4, 0), t1 = weft::doubleBtree(4, 1);
  EXPECT_EQ(t0[0].child[0], 2);
  EXPECT_EQ(t0[2].child[0], 1);
  EXPECT_EQ(t0[2].child[1], 3);
  EXPECT_EQ(t1[3].child[0], 1);
  EXPECT_EQ(t1[1].parent, 3);
  EXPECT_EQ(t1[0].parent, 1);
}

}  // namespace
