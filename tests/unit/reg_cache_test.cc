// The registration cache's interval logic with fake register/deregister
// callbacks (no verbs needed): reuse, growth to granules inside a mapping,
// absorbing overlaps, LRU eviction past the limit that spares pinned entries,
// failures, and deregistration of everything on destruction.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "transports/ib/reg_cache.h"

namespace weft {
namespace {

constexpr uintptr_t kMapLo = 0x10000000, kMapHi = kMapLo + (40 << 20);  // one 40 MiB mapping
constexpr size_t kGranule = 4 << 20;

struct Fake {
  std::map<uintptr_t, size_t> live;  // registered start -> bytes
  int regs = 0, deregs = 0;
  bool fail = false;
  RegCache::Ops ops() {
    RegCache::Ops o;
    o.reg = [this](uintptr_t s, size_t b) -> void* {
      if (fail) return nullptr;
      EXPECT_EQ(live.count(s), 0u) << "registered twice";
      live[s] = b;
      ++regs;
      return reinterpret_cast<void*>(s);
    };
    o.dereg = [this](void* h) {
      EXPECT_EQ(live.erase(reinterpret_cast<uintptr_t>(h)), 1u);
      ++deregs;
    };
    o.extent = [](uintptr_t a, uintptr_t* lo, uintptr_t* hi) {
      if (a < kMapLo || a >= kMapHi) return false;
      *lo = kMapLo;
      *hi = kMapHi;
      return true;
    };
    return o;
  }
};

const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(RegCache, ReusesARegistrationForLaterCallsOverTheSamePages) {
  Fake f;
  RegCache c(f.ops(), 1 << 30, kGranule);
  const RegCache::Entry* e = c.acquire(at(kMapLo + 100), 1000);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->start, kMapLo);
  EXPECT_EQ(e->bytes, kGranule);  // grown to the granule, inside the mapping
  c.release(e);
  for (int i = 0; i < 16; ++i) {  // chunk after chunk of the same buffer
    const RegCache::Entry* h = c.acquire(at(kMapLo + i * 256 * 1024), 256 * 1024);
    ASSERT_EQ(h, e);
    c.release(h);
  }
  EXPECT_EQ(f.regs, 1);
  EXPECT_EQ(c.stats().hits, 16u);
  EXPECT_EQ(c.stats().misses, 1u);
}

TEST(RegCache, ClipsGrowthToTheMappingAndUsesExactPagesOutsideAnyMapping) {
  Fake f;
  RegCache c(f.ops(), 1 << 30, kGranule);
  const RegCache::Entry* e = c.acquire(at(kMapHi - 10), 5);  // last granule ends at kMapHi
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->start + e->bytes, kMapHi);
  c.release(e);
  const RegCache::Entry* o = c.acquire(at(0x1000 + 5), 4096);  // not in the fake mapping
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->start, 0x1000u);
  EXPECT_EQ(o->bytes, 8192u);  // the two pages it touches
  c.release(o);
}

TEST(RegCache, AMissOverlappingUnpinnedEntriesAbsorbsThem) {
  Fake f;
  RegCache c(f.ops(), 1 << 30, kGranule);
  const RegCache::Entry* a = c.acquire(at(kMapLo), 10);
  c.release(a);
  const RegCache::Entry* b = c.acquire(at(kMapLo + 2 * kGranule), 10);
  c.release(b);
  ASSERT_EQ(c.entries(), 2u);
  const RegCache::Entry* big = c.acquire(at(kMapLo + 100), 3 * kGranule);  // spans both
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->start, kMapLo);
  EXPECT_EQ(big->bytes, 4 * kGranule);
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_EQ(f.live.size(), 1u);
  EXPECT_EQ(c.registeredBytes(), 4 * kGranule);
  c.release(big);
}

TEST(RegCache, EvictsLeastRecentlyUsedPastTheLimitButNeverAPinnedEntry) {
  Fake f;
  RegCache c(f.ops(), 2 * kGranule, kGranule);
  const RegCache::Entry* e0 = c.acquire(at(kMapLo), 1);  // kept pinned
  const RegCache::Entry* e1 = c.acquire(at(kMapLo + kGranule), 1);
  c.release(e1);
  const RegCache::Entry* e2 = c.acquire(at(kMapLo + 2 * kGranule), 1);  // 3 > limit: e1 goes
  c.release(e2);
  EXPECT_EQ(c.entries(), 2u);
  EXPECT_EQ(f.live.count(kMapLo), 1u);
  EXPECT_EQ(f.live.count(kMapLo + kGranule), 0u);
  EXPECT_EQ(c.stats().evictions, 1u);
  const RegCache::Entry* e3 = c.acquire(at(kMapLo + 3 * kGranule), 1);  // e2 is the LRU now
  EXPECT_EQ(f.live.count(kMapLo + 2 * kGranule), 0u);
  EXPECT_EQ(c.registeredBytes(), 2 * kGranule);
  c.release(e3);
  c.release(e0);
}

TEST(RegCache, AFailedRegistrationIsNullAndCounted) {
  Fake f;
  f.fail = true;
  RegCache c(f.ops(), 1 << 30, kGranule);
  EXPECT_EQ(c.acquire(at(kMapLo), 10), nullptr);
  EXPECT_EQ(c.stats().failures, 1u);
  EXPECT_EQ(c.entries(), 0u);
}

TEST(RegCache, DestructionDeregistersEverything) {
  Fake f;
  {
    RegCache c(f.ops(), 1 << 30, kGranule);
    for (int i = 0; i < 5; ++i) c.release(c.acquire(at(kMapLo + i * kGranule), 1));
    EXPECT_EQ(f.live.size(), 5u);
  }
  EXPECT_TRUE(f.live.empty());
  EXPECT_EQ(f.deregs, 5);
}

TEST(RegCache, FlushDropsWhatIsNotPinned) {
  Fake f;
  RegCache c(f.ops(), 1 << 30, kGranule);
  const RegCache::Entry* kept = c.acquire(at(kMapLo), 1);
  c.release(c.acquire(at(kMapLo + kGranule), 1));
  c.flush();  // the end of an API call
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_EQ(f.live.count(kMapLo), 1u);
  c.release(kept);
  c.release(c.acquire(at(kMapLo + kGranule), 1));  // registered again: the old one is gone
  EXPECT_EQ(f.regs, 3);
}

TEST(RegCache, ProcMapsFindsTheMappingOfALiveBuffer) {
  std::vector<char> buf(8 << 20);
  uintptr_t lo = 0, hi = 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(buf.data());
  ASSERT_TRUE(RegCache::procMapsExtent(a, &lo, &hi));
  EXPECT_LE(lo, a);
  EXPECT_GE(hi, a + buf.size());
  EXPECT_FALSE(RegCache::procMapsExtent(8, &lo, &hi));  // page 0 is never mapped
}

}  // namespace
}  // namespace weft
