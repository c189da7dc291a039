// The double binary tree (as in NCCL's trees, after Sanders et al. 2009) over
// n positions. Tree 0 is the in-order binary tree: position p > 0 with lowest
// set bit k has children p - k/2 and p + k/2, or, when p + k/2 is past the
// end, the first of p + k/4, p + k/8 ... that exists (it roots what is left of
// that subtree); odd positions are leaves. Position 0 is the root with one
// child, the highest power of two below n. Tree 1 is tree 0 mirrored
// (p -> n-1-p) when n is even and shifted (p -> p+1 mod n) when n is odd, so
// that the leaves of one tree are the interior of the other: a position
// forwards data in at most one tree (for odd n, position 0 is also the
// one-child root of tree 0). Depth is about log2(n) in both trees.
#pragma once

#include <cstddef>
#include <vector>

namespace weft {

// Buffers up to this size go up and down tree 0 alone (tree_allreduce.cc).
constexpr size_t kSingleTreeBytes = 16 << 10;

struct TreeLinks {
  int parent = -1;          // -1: the root
  int child[2] = {-1, -1};  // child[1] is set only when child[0] is
  int nchildren() const { return (child[0] >= 0) + (child[1] >= 0); }
};

// Tree 0 for every position.
inline std::vector<TreeLinks> btree(int n) {
  std::vector<TreeLinks> t(n);
  for (int p = 0; p < n; ++p) {
    int k = 1;
    if (p == 0) {
      while (k < n) k <<= 1;  // the root acts as if its lowest bit were above n
    } else {
      while (!(p & k)) k <<= 1;
    }
    int nc = 0;
    if (p != 0 && k > 1) t[p].child[nc++] = p - k / 2;
    for (int d = k / 2; d >= 1; d /= 2) {
      if (p + d < n) {
        t[p].child[nc++] = p + d;
        break;
      }
    }
  }
  for (int p = 0; p < n; ++p)
    for (int c : t[p].child)
      if (c >= 0) t[c].parent = p;
  return t;
}

// Tree `which` (0 or 1) of the double binary tree, for every position.
inline std::vector<TreeLinks> doubleBtree(int n, int which) {
  std::vector<TreeLinks> t0 = btree(n);
  if (which == 0) return t0;
  auto map = [n](int p) { return p < 0 ? -1 : (n % 2 == 0 ? n - 1 - p : (p + 1) % n); };
  std::vector<TreeLinks> t1(n);
  for (int p = 0; p < n; ++p) {
    TreeLinks& m = t1[map(p)];
    m.parent = map(t0[p].parent);
    m.child[0] = map(t0[p].child[0]);
    m.child[1] = map(t0[p].child[1]);
  }
  return t1;
}

}  // namespace weft
