// Memory registration cache: user buffers are registered once (ibv_reg_mr is
// a system call that pins pages, far too slow per message) and the
// registration is reused by later calls over the same pages. Independent of
// verbs: registering, deregistering and finding a mapping's extent are
// callbacks, so the interval logic is unit-tested on machines without RDMA.
//
// Entries are page-aligned, non-overlapping in practice (a miss that overlaps
// unpinned entries absorbs them into one larger registration), and on a miss
// the range grows to `granule`-aligned bounds clipped to the mapping that holds
// it, so a large buffer sent chunk by chunk costs a few registrations, not one
// per chunk. Past `limitBytes` registered, the least recently used unpinned
// entries are deregistered. Everything left is deregistered on destruction.
//
// Caveat (every registration cache without memory hooks has it): a buffer
// freed and another mapped at the same address would meet the old
// registration, which still pins the old pages, so data would go to or come
// from memory the program no longer sees. The verbs transport therefore
// flushes the cache at the end of every API call unless WEFT_IB_REG_PERSIST=1
// says buffers stay mapped while the communicator lives (docs/rdma.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <utility>

namespace weft {

class RegCache {
 public:
  struct Ops {
    // Registers [start, start + bytes); nullptr when it cannot (not an error:
    // the caller falls back to copying).
    std::function<void*(uintptr_t start, size_t bytes)> reg;
    std::function<void(void* handle)> dereg;
    // The mapping holding addr, [*lo, *hi); false when addr is not mapped.
    std::function<bool(uintptr_t addr, uintptr_t* lo, uintptr_t* hi)> extent;
  };
  struct Entry {
    uintptr_t start = 0;
    size_t bytes = 0;
    void* handle = nullptr;
    int pins = 0;
    std::list<std::pair<uintptr_t, uintptr_t>>::iterator lru;  // in lru_ (front: most recent)
  };
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0, failures = 0;
  };

  RegCache(Ops ops, size_t limitBytes, size_t granule = 4 << 20, size_t page = 4096);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // An entry covering [addr, addr + bytes), pinned (never evicted) until
  // release(); nullptr when registration failed.
  const Entry* acquire(const void* addr, size_t bytes);
  void release(const Entry* e);
  // Deregisters every entry not pinned now (the end of an API call, unless
  // registrations persist: see WEFT_IB_REG_PERSIST).
  void flush();

  size_t registeredBytes() const { return total_; }
  size_t entries() const { return map_.size(); }
  Stats stats() const { return stats_; }

  // The mapping holding addr per /proc/self/maps (the default `extent`).
  static bool procMapsExtent(uintptr_t addr, uintptr_t* lo, uintptr_t* hi);

 private:
  Entry* find(uintptr_t lo, uintptr_t hi);
  using Map = std::map<std::pair<uintptr_t, uintptr_t>, Entry>;  // by (start, end)
  void drop(Map::iterator it);
  void evict();

  Ops ops_;
  size_t limit_, granule_, page_;
  Map map_;
  std::list<std::pair<uintptr_t, uintptr_t>> lru_;  // keys, most recently used first
  size_t total_ = 0;
  size_t longest_ = 0;  // longest entry: bounds the backward search in find()
  Stats stats_;
  std::mutex mu_;
};

}  // namespace weft
