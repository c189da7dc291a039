// One-round shared-memory collectives (see local_board.h).
#include "collectives/local_board.h"

#include <sched.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wait.h"
#include "bootstrap/socket.h"
#include "collectives/reduce.h"

namespace weft {

weftResult_t LocalBoard::publishAndWait(const void* data, size_t bytes, const FlowRunOptions& run,
                                        int* slot) {
  const uint64_t s = ++seq_;
  ShmBoard* mine = shm_->board(rank_);
  *slot = static_cast<int>(s & 1);
  if (bytes > 0) std::memcpy(mine->slot[*slot], data, bytes);
  // The first publish of a collective carries its header (call_header.h);
  // any other publish says "no call starts here".
  CallCheck* check = run.check != nullptr && run.check->pending ? run.check : nullptr;
  if (check != nullptr) check->pending = false;
  mine->call[*slot] = check != nullptr ? check->mine : CallHeader{};
  mine->seq.store(s, std::memory_order_release);
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_) shm_->bell(p)->ring();

  Backoff backoff(run.spinUs, run.yieldUs);
  const Deadline deadline = Deadline::after(run.timeoutSec);  // frozen time aside (base/wait.h)
  Doorbell* bell = shm_->doorbell();
  bool armed = false;
  uint32_t armedSeq = 0;
  int next = 0;  // peers below `next` are known to have published s
  for (;;) {
    while (next < nranks_ &&
           (next == rank_ || shm_->board(next)->seq.load(std::memory_order_acquire) >= s))
      ++next;
    if (next == nranks_) break;
    if (armed) {
      bell->disarm();
      armed = false;
    }
    Backoff::Step step = backoff.next();
    if (step == Backoff::Step::kSpin) continue;
    if (step == Backoff::Step::kYield) {
      sched_yield();
      continue;
    }
    if (run.abortFlag && run.abortFlag->load(std::memory_order_relaxed))
      return setError(weftInvalidUsage, "communicator aborted");
    if (deadline.expired()) {
      std::string missing;
      for (int p = 0; p < nranks_; ++p)
        if (p != rank_ && shm_->board(p)->seq.load(std::memory_order_acquire) < s)
          missing += (missing.empty() ? "" : ",") + std::to_string(p);
      return setError(weftTimeout,
                      "no progress for %.0f s (WEFT_TIMEOUT); ranks that have not arrived: %s",
                      run.timeoutSec, missing.c_str());
    }
    // Arm, re-check once, then sleep until a peer rings (or 20 ms to look for deaths).
    armedSeq = bell->arm();
    armed = true;
    if (shm_->board(next)->seq.load(std::memory_order_acquire) >= s) continue;
    bell->wait(armedSeq, 20000);
    bell->disarm();
    armed = false;
    // A dead peer matters only if it never published this call (it may have
    // finished and exited normally): the loop above re-checks before we blame it.
    for (const auto& [peer, fd] : shm_->deathFds()) {
      if (shm_->board(peer)->seq.load(std::memory_order_acquire) >= s) continue;
      if (peerSocketClosed(fd) && shm_->board(peer)->seq.load(std::memory_order_acquire) < s) {
        if (run.abortFlag && run.abortFlag->load())
          return setError(weftInvalidUsage, "communicator aborted");
        return setError(
            weftRemoteError,
            "local rank %d exited (or its communicator failed) before it arrived (rank %d "
            "was waiting for it)",
            peer, rank_);
      }
    }
  }
  if (check != nullptr)
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_) WEFT_CHECK(compareCall(*check, p, shm_->board(p)->call[*slot]));
  return weftSuccess;
}

weftResult_t LocalBoard::agree(bool mine, const FlowRunOptions& run, bool* all) {
  const uint8_t verdict = mine ? 1 : 0;
  int slot = 0;
  WEFT_CHECK(publishAndWait(&verdict, 1, run, &slot));
  *all = true;
  for (int p = 0; p < nranks_; ++p) *all = *all && slotOf(p, slot)[0] == 1;
  return weftSuccess;
}

weftResult_t LocalBoard::allReduce(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  // Everyone combines the published inputs in rank order: bitwise equal results.
  char* out = static_cast<char*>(a.recvbuff);
  if (nranks_ == 1) {
    if (out != a.sendbuff) std::memcpy(out, a.sendbuff, bytes);
  } else {
    reduceInRankOrder(a.datatype, a.op, out, nranks_, a.count,
                      [&](int p) { return slotOf(p, slot); });
  }
  if (a.op == weftAvg) finishAverage(a.datatype, out, a.count, nranks_);
  return weftSuccess;
}

weftResult_t LocalBoard::allGather(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  char* out = static_cast<char*>(a.recvbuff);
  for (int p = 0; p < nranks_; ++p) {
    const void* src = p == rank_ ? a.sendbuff : slotOf(p, slot);
    if (out + p * bytes != src) std::memmove(out + p * bytes, src, bytes);
  }
  return weftSuccess;
}

weftResult_t LocalBoard::broadcast(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  const bool root = rank_ == a.root;
  int slot = 0;
  WEFT_CHECK(publishAndWait(root ? a.sendbuff : nullptr, root ? bytes : 0, run, &slot));
  const void* src = root ? a.sendbuff : slotOf(a.root, slot);
  if (a.recvbuff != src) std::memcpy(a.recvbuff, src, bytes);
  return weftSuccess;
}

weftResult_t LocalBoard::reduce(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  if (rank_ != a.root) return weftSuccess;
  char* out = static_cast<char*>(a.recvbuff);
  if (nranks_ == 1) {
    if (out != a.sendbuff) std::memcpy(out, a.sendbuff, bytes);
  } else {
    reduceInRankOrder(a.datatype, a.op, out, nranks_, a.count,
                      [&](int p) { return slotOf(p, slot); });
  }
  if (a.op == weftAvg) finishAverage(a.datatype, out, a.count, nranks_);
  return weftSuccess;
}

weftResult_t LocalBoard::barrier(const FlowRunOptions& run) {
  int slot = 0;
  return publishAndWait(nullptr, 0, run, &slot);
}

}  // namespace weft
