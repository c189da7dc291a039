// The staging reaper (staging_reaper.h): a list of blocks, and a detached
// thread that polls their `freed` flags while the list is not empty.
#include "device/staging_reaper.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace weft {
namespace {

struct Held {
  DeviceRuntime* rt;
  void* mem;
  const uint32_t* freed;
  uint32_t gen;
};

struct Reaper {
  std::mutex mu;
  std::condition_variable cv;  // a block was added
  std::vector<Held> held;
  bool running = false;  // a thread is polling `held`
};

// Never destroyed: the detached thread may still run while the process exits.
Reaper& reaper() {
  static auto* r = new Reaper();
  return *r;
}

// Polls every 1 ms at first, backing off to 20 ms while nothing is freed: a
// stalled stream costs a wake-up per 20 ms, a draining one is reaped soon.
void poll() {
  Reaper& r = reaper();
  auto pause = std::chrono::milliseconds(1);
  std::unique_lock<std::mutex> lock(r.mu);
  while (!r.held.empty()) {
    std::vector<Held> done, keep;
    for (const Held& h : r.held) {
      // Acquire pairs with the stream's release of `freed`, written after its
      // last copy through the block: the free below happens after that copy.
      if (flagReached(__atomic_load_n(h.freed, __ATOMIC_ACQUIRE), h.gen))
        done.push_back(h);
      else
        keep.push_back(h);
    }
    r.held.swap(keep);
    if (!done.empty()) {
      lock.unlock();  // freeing pinned memory may take a while (CUDA synchronizes)
      for (const Held& h : done) h.rt->freePinned(h.mem);
      lock.lock();
      pause = std::chrono::milliseconds(1);
      continue;
    }
    r.cv.wait_for(lock, pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  r.running = false;
}

}  // namespace

void reapWhenFreed(DeviceRuntime* rt, void* mem, const uint32_t* freed, uint32_t gen) {
  Reaper& r = reaper();
  std::lock_guard<std::mutex> lock(r.mu);
  r.held.push_back(Held{rt, mem, freed, gen});
  r.cv.notify_all();
  if (!r.running) {
    r.running = true;
    std::thread(poll).detach();
  }
}

size_t reaperHeld() {
  Reaper& r = reaper();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.held.size();
}

}  // namespace weft
