// See reg_cache.h.
#include "transports/ib/reg_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace weft {

RegCache::RegCache(Ops ops, size_t limitBytes, size_t granule, size_t page)
    : ops_(std::move(ops)), limit_(limitBytes), granule_(granule), page_(page) {
  if (!ops_.extent) ops_.extent = procMapsExtent;
}

RegCache::~RegCache() {
  for (auto& kv : map_) ops_.dereg(kv.second.handle);
}

RegCache::Entry* RegCache::find(uintptr_t lo, uintptr_t hi) {
  // Entries starting after lo cannot cover it; one starting more than the
  // longest entry before it cannot reach it.
  auto it = map_.upper_bound({lo, UINTPTR_MAX});
  while (it != map_.begin()) {
    --it;
    Entry& e = it->second;
    if (e.start + longest_ <= lo) break;
    if (e.start <= lo && e.start + e.bytes >= hi) return &e;
  }
  return nullptr;
}

void RegCache::drop(Map::iterator it) {
  ops_.dereg(it->second.handle);
  total_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  map_.erase(it);
}

void RegCache::evict() {
  // Least recently used first; pinned entries are in use by a posted request.
  auto l = lru_.end();  // entries after l are pinned
  while (total_ > limit_ && l != lru_.begin()) {
    auto cur = std::prev(l);
    auto it = map_.find(*cur);
    if (it->second.pins > 0) {
      l = cur;
      continue;
    }
    drop(it);  // erases cur only; l stays valid
    ++stats_.evictions;
  }
}

const RegCache::Entry* RegCache::acquire(const void* addr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t lo = a / page_ * page_,
                  hi = (a + std::max<size_t>(bytes, 1) + page_ - 1) / page_ * page_;
  if (Entry* e = find(lo, hi)) {
    ++stats_.hits;
    ++e->pins;
    lru_.splice(lru_.begin(), lru_, e->lru);
    return e;
  }
  ++stats_.misses;
  // Grow to granule bounds inside the mapping, then absorb unpinned entries
  // that overlap, so the same pages are never registered twice.
  uintptr_t mapLo = 0, mapHi = 0;
  uintptr_t start = lo, end = hi;
  if (ops_.extent(a, &mapLo, &mapHi) && mapLo <= lo && mapHi >= hi) {
    start = std::max(mapLo, lo / granule_ * granule_);
    end = std::min(mapHi, (hi + granule_ - 1) / granule_ * granule_);
  }
  for (auto it = map_.lower_bound({start > longest_ ? start - longest_ : 0, 0});
       it != map_.end() && it->first.first < end;) {
    const Entry& e = it->second;
    if (e.start + e.bytes <= start || e.pins > 0) {
      ++it;
      continue;
    }
    start = std::min(start, e.start);
    end = std::max(end, e.start + e.bytes);
    drop(it++);
  }
  void* handle = ops_.reg(start, end - start);
  if (handle == nullptr) {
    ++stats_.failures;
    return nullptr;
  }
  // A pinned entry with these very bounds would have covered the range.
  Entry& e = map_[{start, end}];
  e.start = start;
  e.bytes = end - start;
  e.handle = handle;
  e.pins = 1;
  lru_.push_front({start, end});
  e.lru = lru_.begin();
  total_ += e.bytes;
  longest_ = std::max(longest_, e.bytes);
  evict();
  return &e;
}

void RegCache::release(const Entry* e) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find({e->start, e->start + e->bytes});
  if (it == map_.end()) return;
  --it->second.pins;
  evict();
}

void RegCache::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = map_.begin(); it != map_.end();) {
    if (it->second.pins > 0)
      ++it;
    else
      drop(it++);
  }
}

bool RegCache::procMapsExtent(uintptr_t addr, uintptr_t* lo, uintptr_t* hi) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return false;
  char line[512];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) {
    uintmax_t l = 0, h = 0;
    if (std::sscanf(line, "%jx-%jx", &l, &h) == 2 && l <= addr && addr < h) {
      *lo = static_cast<uintptr_t>(l);
      *hi = static_cast<uintptr_t>(h);
      found = true;
    }
  }
  std::fclose(f);
  return found;
}

}  // namespace weft
