// Checks the ring algorithms' index arithmetic (collectives/ring_schedule.h):
// segments and chunks must tile [0, count) exactly once, in order, with no gap
// or overlap, for many shapes including count < nranks; the chunk count must
// keep every chunk within chunkBytes (+1 element); striping items over streams
// must account for every item. A mistake here silently corrupts results.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/ring_schedule.h"

namespace {

std::string shape(size_t count, int nranks, int64_t nchunks) {
  return "count=" + std::to_string(count) + " nranks=" + std::to_string(nranks) +
         " nchunks=" + std::to_string(nchunks);
}

// Walks every segment and chunk in order and checks they tile [0, count).
void expectTiling(size_t count, int nranks, int64_t nchunks) {
  size_t next = 0;  // first element not yet covered
  size_t base = count / static_cast<size_t>(nranks);
  for (int seg = 0; seg < nranks; ++seg) {
    weft::Span s = weft::segmentOf(count, nranks, seg);
    ASSERT_EQ(s.offset, next) << shape(count, nranks, nchunks) << " seg=" << seg;
    // Balanced: the first count % nranks segments hold one extra element.
    size_t want = base + (static_cast<size_t>(seg) < count % static_cast<size_t>(nranks) ? 1 : 0);
    ASSERT_EQ(s.count, want) << shape(count, nranks, nchunks) << " seg=" << seg;
    size_t inSeg = s.offset;
    for (int64_t c = 0; c < nchunks; ++c) {
      weft::Span ch = weft::chunkOf(s, nchunks, c);
      ASSERT_EQ(ch.offset, inSeg) << shape(count, nranks, nchunks) << " seg=" << seg
                                  << " chunk=" << c;
      inSeg += ch.count;
    }
    ASSERT_EQ(inSeg, s.offset + s.count) << shape(count, nranks, nchunks) << " seg=" << seg;
    next = s.offset + s.count;
  }
  ASSERT_EQ(next, count) << shape(count, nranks, nchunks);
}

TEST(RingSchedule, SegmentsAndChunksTileTheBuffer) {
  const size_t counts[] = {0,  1,  2,    3,    4,    5,    7,     8,      63,
                           64, 65, 1000, 1023, 1024, 4097, 65537, 1000003};
  const int ranks[] = {1, 2, 3, 4, 5, 7, 8, 16, 33};
  const int64_t chunks[] = {1, 2, 3, 7, 16, 100};
  for (size_t count : counts)
    for (int n : ranks)
      for (int64_t c : chunks) {
        expectTiling(count, n, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(RingSchedule, CountBelowRanksGivesEmptyTailSegments) {
  for (int n = 2; n <= 9; ++n) {
    for (size_t count = 0; count < static_cast<size_t>(n); ++count) {
      for (int seg = 0; seg < n; ++seg) {
        weft::Span s = weft::segmentOf(count, n, seg);
        EXPECT_EQ(s.count, static_cast<size_t>(seg) < count ? 1u : 0u)
            << shape(count, n, 1) << " seg=" << seg;
        EXPECT_LE(s.offset, count);
      }
      expectTiling(count, n, 3);
    }
  }
}

TEST(RingSchedule, LargeCountsDoNotTruncate) {
  // Past 2^32 elements: checks that no 32-bit intermediate wraps.
  const size_t count = (size_t{1} << 33) + 12345;
  const int n = 7;
  const int64_t nchunks = 4099;
  size_t total = 0, prevEnd = 0;
  for (int seg = 0; seg < n; ++seg) {
    weft::Span s = weft::segmentOf(count, n, seg);
    EXPECT_EQ(s.offset, prevEnd);
    weft::Span first = weft::chunkOf(s, nchunks, 0);
    weft::Span last = weft::chunkOf(s, nchunks, nchunks - 1);
    EXPECT_EQ(first.offset, s.offset);
    EXPECT_EQ(last.offset + last.count, s.offset + s.count);
    total += s.count;
    prevEnd = s.offset + s.count;
  }
  EXPECT_EQ(total, count);
}

TEST(RingSchedule, ChunksPerSegmentBoundsChunkBytes) {
  const size_t elemSizes[] = {1, 2, 4, 8};
  const size_t chunkBytes[] = {64, 100, 4096, 256 << 10};
  const size_t segElems[] = {0, 1, 7, 63, 64, 1000, 65536, 1000003, 50000017};
  for (size_t es : elemSizes)
    for (size_t cb : chunkBytes)
      for (size_t maxSeg : segElems) {
        int64_t c = weft::chunksPerSegment(maxSeg, es, cb);
        std::string what = "maxSeg=" + std::to_string(maxSeg) + " esize=" + std::to_string(es) +
                           " chunkBytes=" + std::to_string(cb);
        ASSERT_GE(c, 1) << what;
        // Not more chunks than needed: one fewer would exceed chunkBytes.
        if (c > 1) {
          EXPECT_GT(maxSeg * es, static_cast<size_t>(c - 1) * cb) << what;
        }
        // Every chunk of the longest segment and of one element shorter stays in bound.
        for (size_t len : {maxSeg, maxSeg > 0 ? maxSeg - 1 : 0}) {
          weft::Span seg{0, len};
          size_t biggest = 0;
          for (int64_t k = 0; k < c && k < 5000; ++k) {  // sizes differ by one at most
            size_t n = weft::chunkOf(seg, c, k).count;
            biggest = n > biggest ? n : biggest;
          }
          EXPECT_LE(biggest * es, cb + es) << what << " len=" << len;
        }
      }
}

TEST(RingSchedule, ItemsOnStreamSumToTotal) {
  for (int nstreams = 1; nstreams <= 8; ++nstreams) {
    for (int64_t total = 0; total <= 200; ++total) {
      int64_t sum = 0;
      for (int s = 0; s < nstreams; ++s) {
        int64_t want = 0;
        for (int64_t i = s; i < total; i += nstreams) ++want;  // items i with i % nstreams == s
        int64_t got = weft::itemsOnStream(total, nstreams, s);
        EXPECT_EQ(got, want) << "total=" << total << " nstreams=" << nstreams << " stream=" << s;
        sum += got;
      }
      EXPECT_EQ(sum, total) << "nstreams=" << nstreams;
    }
  }
  const int64_t big = (int64_t{1} << 40) + 3;
  EXPECT_EQ(weft::itemsOnStream(big, 4, 0) + weft::itemsOnStream(big, 4, 1) +
                weft::itemsOnStream(big, 4, 2) + weft::itemsOnStream(big, 4, 3),
            big);
}

TEST(RingSchedule, ModIsNonNegative) {
  EXPECT_EQ(weft::mod(-1, 5), 4);
  EXPECT_EQ(weft::mod(-5, 5), 0);
  EXPECT_EQ(weft::mod(-11, 5), 4);
  EXPECT_EQ(weft::mod(7, 5), 2);
  EXPECT_EQ(weft::mod(0, 1), 0);
  EXPECT_EQ(weft::mod(-(int64_t{1} << 40) - 1, 3), 1);  // 2^40 = 1 (mod 3)
}

// RingOrder is a bijection between item indices and (step, chunk) pairs, each
// chunk's previous step comes earlier (the ring's deadlock freedom rests on
// it), and a block as large as the segment is the plain step-major order.
TEST(RingSchedule, RingOrderIsABijectionWithEarlierPredecessors) {
  for (int64_t steps = 1; steps <= 7; ++steps) {
    for (int64_t chunks = 1; chunks <= 13; ++chunks) {
      for (int64_t block = 1; block <= chunks; ++block) {
        weft::RingOrder o;
        o.steps = steps;
        o.chunks = chunks;
        o.block = block;
        std::vector<int> seen(static_cast<size_t>(steps * chunks), 0);
        for (int64_t i = 0; i < steps * chunks; ++i) {
          int64_t s = -1, c = -1;
          o.at(i, &s, &c);
          ASSERT_TRUE(s >= 0 && s < steps && c >= 0 && c < chunks)
              << "i=" << i << " steps=" << steps << " chunks=" << chunks << " block=" << block;
          EXPECT_EQ(o.index(s, c), i);
          ++seen[static_cast<size_t>(s * chunks + c)];
          if (s > 0) {
            EXPECT_LT(o.index(s - 1, c), i);
          }
          if (block == chunks) {
            EXPECT_EQ(i, s * chunks + c);  // step-major
          }
        }
        for (int v : seen) EXPECT_EQ(v, 1);
      }
    }
  }
}

TEST(RingSchedule, RingOrderBlockFollowsChunkSize) {
  EXPECT_EQ(weft::ringOrder(2, 100, 256 << 10).block, 2);  // 512 KiB of 256 KiB chunks
  EXPECT_EQ(weft::ringOrder(2, 100, 64 << 10).block, 8);
  EXPECT_EQ(weft::ringOrder(2, 3, 1 << 10).block, 3);    // never more than the chunks
  EXPECT_EQ(weft::ringOrder(2, 100, 4 << 20).block, 1);  // chunks larger than a block
}

}  // namespace
