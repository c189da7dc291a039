// Doorbell futex operations (see doorbell.h for the ordering argument).
#include "transports/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace weft {
namespace {
// Shared (not FUTEX_PRIVATE) futexes: the word is in memory mapped by several processes.
long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}
}  // namespace

void Doorbell::ring() {
  // An acq_rel read-modify-write that changes nothing: if it reads 0 it comes
  // before the sleeper's arm() exchange in `sleeping`'s modification order, so
  // that exchange reads from it and the counter this peer published (before
  // this call) is visible to the sleeper's re-check.
  if (sleeping.fetch_add(0, std::memory_order_acq_rel) != 0) {
    seq.fetch_add(1, std::memory_order_seq_cst);
    futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

uint32_t Doorbell::arm() {
  uint32_t v = seq.load(std::memory_order_acquire);
  // acq_rel exchange, the sleeper's half of the pair described in ring().
  sleeping.exchange(1, std::memory_order_acq_rel);
  return v;
}

void Doorbell::wait(uint32_t armedSeq, int timeoutUs) {
  timespec ts{timeoutUs / 1000000, (timeoutUs % 1000000) * 1000L};
  futex(&seq, FUTEX_WAIT, armedSeq, &ts);
}

}  // namespace weft
