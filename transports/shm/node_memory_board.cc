// The boards' publish and wait (see node_memory.h, shm_board.h).
#include <cstring>
#include <string>

#include "base/error.h"
#include "bootstrap/socket.h"
#include "transports/shm/node_memory.h"

namespace weft {

weftResult_t NodeMemory::publishAndWait(const void* data, size_t bytes, const WaitPolicy& wait,
                                        CallCheck* check, int* slot) {
  const uint64_t s = ++seq_;
  ShmBoard* mine = shm_->board(rank_);
  *slot = static_cast<int>(s & 1);
  if (bytes > 0) std::memcpy(mine->slot[*slot], data, bytes);
  // The first publish of a collective carries its header (call_header.h);
  // any other publish says "no call starts here".
  if (check != nullptr && !check->pending) check = nullptr;
  if (check != nullptr) check->pending = false;
  mine->call[*slot] = check != nullptr ? check->mine : CallHeader{};
  mine->seq.store(s, std::memory_order_release);
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_) shm_->bell(p)->ring();

  Waiter waiter(wait);
  Doorbell* bell = shm_->doorbell();
  int next = 0;  // peers below `next` are known to have published s
  for (;;) {
    while (next < nranks_ && (next == rank_ || published(next) >= s)) ++next;
    if (next == nranks_) break;
    switch (waiter.idle()) {
      case Waiter::Idle::kLook:
        continue;
      case Waiter::Idle::kAborted:
        return setError(weftInvalidUsage, "communicator aborted");
      case Waiter::Idle::kTimedOut: {
        std::string missing;
        for (int p = 0; p < nranks_; ++p)
          if (p != rank_ && published(p) < s)
            missing += (missing.empty() ? "" : ",") + std::to_string(p);
        return setError(weftTimeout,
                        "no progress for %.0f s (WEFT_TIMEOUT); ranks that have not arrived: %s",
                        wait.timeoutSec, missing.c_str());
      }
      case Waiter::Idle::kSleep:
        break;
    }
    // Arm, re-check once (doorbell.h says why), then sleep until a peer rings
    // (or 20 ms, to look for deaths).
    const uint32_t armedSeq = bell->arm();
    if (published(next) < s) bell->wait(armedSeq, 20000);
    bell->disarm();
    WEFT_CHECK(checkDeaths(s, wait));
  }
  if (check != nullptr)
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_) WEFT_CHECK(compareCall(*check, p, shm_->board(p)->call[*slot]));
  return weftSuccess;
}

// A dead peer matters only if it never published this call (it may have
// finished and exited normally): its board is read again after its socket
// closed, so a publish just before the exit is not blamed.
weftResult_t NodeMemory::checkDeaths(uint64_t seq, const WaitPolicy& wait) {
  for (const auto& [peer, fd] : shm_->deathFds()) {
    if (published(peer) >= seq) continue;
    if (!peerSocketClosed(fd) || published(peer) >= seq) continue;
    if (wait.abortFlag != nullptr && wait.abortFlag->load())
      return setError(weftInvalidUsage, "communicator aborted");
    return setError(weftRemoteError,
                    "local rank %d exited (or its communicator failed) before it arrived (rank %d "
                    "was waiting for it)",
                    peer, rank_);
  }
  return weftSuccess;
}

weftResult_t NodeMemory::agree(bool mine, const WaitPolicy& wait, bool* all) {
  const uint8_t verdict = mine ? 1 : 0;
  int slot = 0;
  WEFT_CHECK(publishAndWait(&verdict, 1, wait, nullptr, &slot));
  *all = true;
  for (int p = 0; p < nranks_; ++p) *all = *all && slotOf(p, slot)[0] == 1;
  return weftSuccess;
}

}  // namespace weft
