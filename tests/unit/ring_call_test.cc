// The GPU ring's per-call arithmetic (collectives/kernels/ring_call.h), on
// the host: CTA shares cover a call exactly once, and ringMessages is what
// the schedule really posts, so that message numbers carried from call to
// call (as src/device/device_ring.h does) keep every rank in step, for
// allreduce and for the block collectives (allgather, reduce-scatter). Ranks
// are threads running runRingCta, the code each CTA of the kernel runs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/kernels/ring_call.h"
#include "ring_cta_threads.h"

namespace {

using weft::dev::Channel;
using weft::dev::RingCall;
using weft::test::ringCall;
using Threads = weft::test::RingCtaThreads<int32_t, weft::dev::OpSum>;

TEST(RingCall, SharesCoverEveryElementOnce) {
  for (uint64_t count : {0ull, 1ull, 63ull, 64ull, 65ull, 1000ull, 4096ull, 3145733ull}) {
    for (int nctas : {1, 2, 3, 8, 32}) {
      uint64_t next = 0;
      for (int c = 0; c < nctas; ++c) {
        uint64_t begin = 0, len = 0;
        weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
        if (len == 0) continue;
        EXPECT_EQ(begin, next) << count << " elements, CTA " << c << " of " << nctas;
        EXPECT_EQ(begin % 64, 0u);
        next = begin + len;
      }
      EXPECT_EQ(next, count) << count << " elements over " << nctas << " CTAs";
    }
  }
}

struct Fifo {
  explicit Fifo(uint32_t nslots, uint32_t slotBytes)
      : slots(size_t{nslots} * slotBytes), sizes(nslots), nslots(nslots), slotBytes(slotBytes) {}
  std::vector<unsigned char> slots;
  std::vector<uint64_t> sizes;
  uint64_t tail = 0, head = 0;
  uint32_t nslots, slotBytes;
  Channel channel(const int* abort) {
    return Channel{slots.data(), sizes.data(), &tail, &head, nslots, slotBytes, abort};
  }
};

// Several calls of different sizes in a row on the same FIFOs (two CTAs per
// rank), each starting at the message number the previous ones left.
void runAllreduceCalls(int lanes = 1) {
  const uint32_t kSlotBytes = 256;
  for (int n : {2, 3, 5}) {
    const int nctas = 2;
    std::vector<std::unique_ptr<Fifo>> fifos;  // [cta * n + r]: rank r -> r + 1
    for (int i = 0; i < nctas * n; ++i) fifos.push_back(std::make_unique<Fifo>(3, kSlotBytes));
    uint64_t seq[2] = {0, 0};
    int abort = 0;
    for (uint64_t count : {1000ull, 1ull, 0ull, 777ull, 4099ull}) {
      std::vector<std::vector<int32_t>> data(n, std::vector<int32_t>(count));
      for (int r = 0; r < n; ++r)
        for (uint64_t i = 0; i < count; ++i) data[r][i] = static_cast<int32_t>(i % 13) + r;
      std::vector<RingCall> calls;
      for (int r = 0; r < n; ++r) {
        calls.push_back(ringCall(weft::dev::kRingAllReduce, data[r].data(), data[r].data(), count,
                                 r, n, nctas, &abort));
        for (int c = 0; c < nctas; ++c) {
          calls[r].sendSeq[c] = calls[r].recvSeq[c] = seq[c];
          calls[r].send[c] = fifos[c * n + r]->channel(&abort);
          calls[r].recv[c] = fifos[c * n + (r + n - 1) % n]->channel(&abort);
        }
      }
      Threads threads(calls, nctas, lanes);
      threads.join();
      ASSERT_EQ(threads.divergence(), "");
      for (int c = 0; c < nctas; ++c) {
        uint64_t begin = 0, len = 0;
        weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
        seq[c] += weft::dev::ringMessages(len, n, kSlotBytes, 4);
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(calls[r].status[c], weft::dev::kRingCtaDone);
          EXPECT_EQ(fifos[c * n + r]->tail, seq[c]) << n << " ranks, count " << count;
          EXPECT_EQ(fifos[c * n + r]->head, seq[c]);
        }
      }
      for (int r = 0; r < n; ++r)
        for (uint64_t i = 0; i < count; ++i)
          ASSERT_EQ(data[r][i], static_cast<int32_t>(i % 13) * n + n * (n - 1) / 2)
              << "rank " << r << " element " << i << " of " << count;
    }
  }
}

// Allgather and reduce-scatter (ring_block_schedule.h) through runRingCta,
// with the ring visiting the ranks out of order (rankAt), two CTAs, small
// slots (many pieces), several calls in a row on the same FIFOs, in place and
// out of place.
void runBlockCalls(int32_t kind, bool inPlace, int lanes = 1) {
  const uint32_t kSlotBytes = 64;
  for (int n : {1, 2, 3, 5}) {
    const int nctas = 2;
    std::vector<int32_t> rankAt(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) rankAt[p] = (p * 2 + 1) % n;  // a permutation for odd n
    if (n % 2 == 0)
      for (int p = 0; p < n; ++p) rankAt[p] = n - 1 - p;
    std::vector<std::unique_ptr<Fifo>> fifos;  // [cta * n + p]: position p -> p + 1
    for (int i = 0; i < nctas * n; ++i) fifos.push_back(std::make_unique<Fifo>(2, kSlotBytes));
    uint64_t seq[2] = {0, 0};
    int abort = 0;
    for (uint64_t count : {100ull, 1ull, 0ull, 333ull}) {
      const size_t all = count * static_cast<size_t>(n);
      // data[p]: the buffer of the rank at position p (n blocks; the input
      // block, or the output block, as the kind wants); out[p]: its output.
      std::vector<std::vector<int32_t>> data(n, std::vector<int32_t>(all, -1));
      std::vector<std::vector<int32_t>> sep(n, std::vector<int32_t>(all, -1));
      auto value = [](int rank, uint64_t i) { return static_cast<int32_t>(i % 17) * 10 + rank; };
      std::vector<RingCall> calls;
      for (int p = 0; p < n; ++p) {
        const int rank = rankAt[p];
        const void* in = nullptr;
        void* out = nullptr;
        if (kind == weft::dev::kRingAllGather) {
          int32_t* block = data[p].data() + static_cast<size_t>(rank) * count;
          for (uint64_t i = 0; i < count; ++i) block[i] = value(rank, i);
          in = inPlace ? block : sep[p].data();
          if (!inPlace)
            for (uint64_t i = 0; i < count; ++i) sep[p][i] = value(rank, i);
          out = data[p].data();
        } else {
          for (uint64_t i = 0; i < all; ++i) data[p][i] = value(rank, i);
          in = data[p].data();
          out = inPlace ? data[p].data() + static_cast<size_t>(rank) * count : sep[p].data();
        }
        calls.push_back(ringCall(kind, in, out, count, p, n, nctas, &abort, rankAt.data()));
        for (int c = 0; c < nctas; ++c) {
          calls[p].sendSeq[c] = calls[p].recvSeq[c] = seq[c];
          calls[p].send[c] = fifos[c * n + p]->channel(&abort);
          calls[p].recv[c] = fifos[c * n + (p + n - 1) % n]->channel(&abort);
        }
      }
      Threads threads(calls, nctas, lanes);
      threads.join();
      ASSERT_EQ(threads.divergence(), "");
      for (int c = 0; c < nctas; ++c) {
        uint64_t begin = 0, len = 0;
        weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
        seq[c] += weft::dev::ringCallMessages(kind, len, n, kSlotBytes, 4);
        for (int p = 0; p < n; ++p) {
          ASSERT_EQ(calls[p].status[c], weft::dev::kRingCtaDone);
          EXPECT_EQ(fifos[c * n + p]->tail, seq[c]) << n << " ranks, count " << count;
          EXPECT_EQ(fifos[c * n + p]->head, seq[c]);
        }
      }
      for (int p = 0; p < n; ++p) {
        const int rank = rankAt[p];
        if (kind == weft::dev::kRingAllGather) {
          for (int q = 0; q < n; ++q)
            for (uint64_t i = 0; i < count; ++i)
              ASSERT_EQ(data[p][q * count + i], value(q, i))
                  << n << " ranks, rank " << rank << " block " << q << " element " << i;
        } else {
          const int32_t* out = static_cast<const int32_t*>(calls[p].out);
          for (uint64_t i = 0; i < count; ++i) {
            int32_t want = 0;
            for (int q = 0; q < n; ++q) want += value(q, static_cast<uint64_t>(rank) * count + i);
            ASSERT_EQ(out[i], want) << n << " ranks, rank " << rank << " element " << i;
          }
        }
      }
    }
  }
}

// Broadcast and reduce (ring_chain_schedule.h) through runRingCta: every
// root, the ring visiting ranks out of order, two CTAs, small slots, several
// calls in a row. The link into the root (broadcast) or out of it (reduce)
// carries nothing, so every link keeps its own message count.
void runChainCalls(int32_t kind, bool inPlace, int lanes = 1) {
  const uint32_t kSlotBytes = 64;
  const bool bcast = kind == weft::dev::kRingBroadcast;
  for (int n : {1, 2, 3, 4}) {
    const int nctas = 2;
    std::vector<int32_t> rankAt(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) rankAt[p] = n - 1 - p;
    std::vector<std::unique_ptr<Fifo>> fifos;  // [cta * n + p]: position p -> p + 1
    for (int i = 0; i < nctas * n; ++i) fifos.push_back(std::make_unique<Fifo>(2, kSlotBytes));
    std::vector<uint64_t> link(static_cast<size_t>(nctas * n), 0);  // messages per link so far
    int abort = 0;
    for (int rootRank = 0; rootRank < n; ++rootRank) {
      for (uint64_t count : {100ull, 1ull, 333ull}) {
        int rootPos = 0;
        while (rankAt[rootPos] != rootRank) ++rootPos;
        auto value = [](int rank, uint64_t i) { return static_cast<int32_t>(i % 13) + 3 * rank; };
        std::vector<std::vector<int32_t>> in(n, std::vector<int32_t>(count));
        std::vector<std::vector<int32_t>> out(n, std::vector<int32_t>(count, -7));
        std::vector<RingCall> calls;
        for (int p = 0; p < n; ++p) {
          for (uint64_t i = 0; i < count; ++i) in[p][i] = value(rankAt[p], i);
          const bool root = p == rootPos;
          calls.push_back(
              ringCall(kind, bcast && !root ? nullptr : in[p].data(),
                       !bcast && !root ? nullptr : (inPlace && root ? in[p].data() : out[p].data()),
                       count, p, n, nctas, &abort, rankAt.data()));
          RingCall& call = calls[p];
          call.rootPos = rootPos;
          for (int c = 0; c < nctas; ++c) {
            call.sendSeq[c] = link[c * n + p];
            call.recvSeq[c] = link[c * n + (p + n - 1) % n];
            call.send[c] = fifos[c * n + p]->channel(&abort);
            call.recv[c] = fifos[c * n + (p + n - 1) % n]->channel(&abort);
          }
        }
        Threads threads(calls, nctas, lanes);
        threads.join();
        ASSERT_EQ(threads.divergence(), "");
        for (int c = 0; c < nctas; ++c) {
          uint64_t begin = 0, len = 0;
          weft::dev::ringCtaShare(count, nctas, c, &begin, &len);
          for (int p = 0; p < n; ++p) {
            ASSERT_EQ(calls[p].status[c], weft::dev::kRingCtaDone);
            link[c * n + p] += weft::dev::ringCallMessages(kind, len, n, kSlotBytes, 4, p, rootPos);
          }
          for (int p = 0; p < n; ++p) {
            EXPECT_EQ(fifos[c * n + p]->tail, link[c * n + p]) << n << " ranks, link " << p;
            EXPECT_EQ(fifos[c * n + p]->head, link[c * n + p]) << n << " ranks, link " << p;
          }
        }
        for (int p = 0; p < n; ++p) {
          const bool root = p == rootPos;
          if (!bcast && !root) continue;  // reduce: only the root's output is defined
          const int32_t* got = static_cast<const int32_t*>(calls[p].out);
          for (uint64_t i = 0; i < count; ++i) {
            int32_t want = value(rootRank, i);
            if (!bcast) {
              want = 0;
              for (int q = 0; q < n; ++q) want += value(q, i);
            }
            ASSERT_EQ(got[i], want)
                << n << " ranks, root " << rootRank << ", position " << p << ", element " << i;
          }
        }
      }
    }
  }
}

TEST(RingCall, MessageNumbersCarryAcrossCalls) { runAllreduceCalls(); }
TEST(RingCall, BroadcastFromEveryRoot) { runChainCalls(weft::dev::kRingBroadcast, false); }
TEST(RingCall, BroadcastInPlace) { runChainCalls(weft::dev::kRingBroadcast, true); }
TEST(RingCall, ReduceToEveryRoot) { runChainCalls(weft::dev::kRingReduce, false); }
TEST(RingCall, ReduceInPlace) { runChainCalls(weft::dev::kRingReduce, true); }

TEST(RingCall, AllgatherPlacesBlocksByRank) { runBlockCalls(weft::dev::kRingAllGather, false); }
TEST(RingCall, AllgatherInPlace) { runBlockCalls(weft::dev::kRingAllGather, true); }
TEST(RingCall, ReduceScatterKeepsOurBlock) { runBlockCalls(weft::dev::kRingReduceScatter, false); }
TEST(RingCall, ReduceScatterInPlace) { runBlockCalls(weft::dev::kRingReduceScatter, true); }

// Each CTA as a block of lanes (host threads with a barrier for
// __syncthreads), as the GPU runs it: every lane must take part in every
// barrier, and the lanes' share of each slot must cover it exactly (4 lanes:
// a 64-byte slot is one 16-byte vector each; 3 lanes: uneven shares).
TEST(RingCall, EveryKindWithBlockLanes) {
  for (int lanes : {3, 4}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes per CTA");
    runAllreduceCalls(lanes);
    runChainCalls(weft::dev::kRingBroadcast, false, lanes);
    runChainCalls(weft::dev::kRingReduce, true, lanes);
    runBlockCalls(weft::dev::kRingAllGather, false, lanes);
    runBlockCalls(weft::dev::kRingReduceScatter, true, lanes);
  }
}

}  // namespace
