// The dissemination schedule (collectives/dissemination.h) that the call
// check and the barrier use, and the check's summaries (base/call_header.h): after the steps every
// rank has heard from every other, in ceil(log_R n) steps of at most R - 1 messages, and folding
// the summaries in any order leaves every rank with the same least and greatest header.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "base/call_header.h"
#include "base/coll_kind.h"
#include "collectives/dissemination.h"

namespace {

TEST(CallCheckSchedule, EveryRankHearsFromEveryOther) {
  for (int radix : {2, 3, 4, 7, 8, 16}) {
    for (int n = 1; n <= 200; ++n) {
      const std::vector<std::vector<int>> steps = weft::disseminationSchedule(n, radix);
      int want = 0;
      for (long span = 1; span < n; span *= radix) ++want;
      ASSERT_EQ(static_cast<int>(steps.size()), want) << "n " << n << " radix " << radix;
      // heard[r][s]: rank r knows rank s's header.
      std::vector<std::vector<char>> heard(n, std::vector<char>(n, 0));
      for (int r = 0; r < n; ++r) heard[r][r] = 1;
      for (const std::vector<int>& offsets : steps) {
        ASSERT_LE(static_cast<int>(offsets.size()), radix - 1);
        for (int d : offsets) ASSERT_TRUE(d > 0 && d < n);
        const auto before = heard;  // a step passes on what the steps before brought
        for (int r = 0; r < n; ++r)
          for (int d : offsets)
            for (int s = 0; s < n; ++s) heard[r][s] |= before[(r - d + n) % n][s];
      }
      for (int r = 0; r < n; ++r)
        ASSERT_EQ(std::count(heard[r].begin(), heard[r].end(), 1), n)
            << "rank " << r << " of " << n << ", radix " << radix;
    }
  }
}

weft::CallHeader header(uint64_t count, int root) {
  weft::CallHeader h;
  h.magic = weft::kCallMagic;
  h.kind = static_cast<uint8_t>(weft::CollKind::kAllReduce);
  h.datatype = weftFloat32;
  h.op = weftSum;
  h.root = root;
  h.seq = 3;
  h.count = count;
  return h;
}

TEST(CallCheckSchedule, SummariesAgreeInAnyOrder) {
  // Ranks 0-9 call the same allreduce (the root, which an allreduce ignores,
  // differs), rank 6 with another count: every order of folding ends the same.
  std::vector<weft::CallSummary> parts;
  for (int r = 0; r < 10; ++r) parts.push_back(weft::summaryOf(header(r == 6 ? 5 : 4, r), r));
  weft::CallSummary first;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(parts.begin(), parts.end(), rng);
    weft::CallSummary s = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) weft::mergeSummary(s, parts[i]);
    EXPECT_FALSE(weft::summaryAgrees(s));
    EXPECT_TRUE(s.loRank == 6 || s.hiRank == 6);
    if (trial == 0) first = s;
    EXPECT_EQ(s.loRank, first.loRank);
    EXPECT_EQ(s.hiRank, first.hiRank);
  }
  // Without rank 6, the roots alone do not make a disagreement.
  weft::CallSummary same = weft::summaryOf(header(4, 0), 0);
  for (int r = 1; r < 10; ++r) weft::mergeSummary(same, weft::summaryOf(header(4, r), r));
  EXPECT_TRUE(weft::summaryAgrees(same));
}

}  // namespace
