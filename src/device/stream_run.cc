// The progress thread's side of a call on a stream (stream_run.h).
#include "device/stream_run.h"

#include <sched.h>
#include <unistd.h>

#include "base/device_runtime.h"
#include "base/error.h"
#include "base/wait.h"
#include "core/comm.h"

namespace weft {
namespace {

// The failure that broke `comm` (weftSuccess: none).
weftResult_t failureOf(weftComm* comm) {
  std::lock_guard<std::mutex> lock(comm->failMu);
  return comm->failure;
}

}  // namespace

// Waits for the stream to reach the call (its "ready"). Gives up on abort, at
// WEFT_TIMEOUT, when the communicator is being destroyed and its closeBy
// passed (one bound for all pending calls, not one per call), and once the
// communicator is broken: the call could not run anyway, and raising "done"
// at once releases its stream (a stalled stream's calls then all fail at the
// first timeout instead of one timeout after another).
weftResult_t waitStreamReady(weftComm* comm, const StagingBlock* block, uint32_t gen,
                             const Call& first) {
  Waiter waiter(comm->waitPolicy());
  while (!flagReached(__atomic_load_n(block->ready, __ATOMIC_ACQUIRE), gen)) {
    const Waiter::Idle idle = waiter.idle();
    // An abort also breaks the communicator: name the abort first.
    if (idle == Waiter::Idle::kAborted)
      return setError(weftInvalidUsage, "rank %d: %s on a stream: comm was aborted", comm->rank,
                      describeCall(first).c_str());
    if (idle == Waiter::Idle::kTimedOut)
      return setError(weftTimeout,
                      "rank %d: %s on a stream: the stream did not reach the call within "
                      "WEFT_TIMEOUT=%g s (is it blocked, or waiting on something that waits for "
                      "this call?)",
                      comm->rank, describeCall(first).c_str(), waiter.timeoutSec());
    if (comm->closing.load(std::memory_order_acquire) && Clock::now() >= comm->closeBy)
      return setError(weftTimeout,
                      "rank %d: %s on a stream: the communicator is being destroyed and the "
                      "stream did not reach the call within WEFT_TIMEOUT=%g s of that",
                      comm->rank, describeCall(first).c_str(), comm->config.timeoutSec);
    if (weftResult_t failure = failureOf(comm))
      return setError(failure,
                      "rank %d: %s on a stream: the communicator broke before the stream reached "
                      "the call",
                      comm->rank, describeCall(first).c_str());
    if (idle == Waiter::Idle::kSleep) Waiter::nap();
  }
  return weftSuccess;
}

void failStreamCall(weftComm* comm, weftResult_t r) {
  comm->markBroken(r, lastError() + " (a call on a CUDA stream; its outputs are undefined)");
}

// The progress thread's part of the calls in `block` (see the top of stream_part.cc).
weftResult_t runStaged(weftComm* comm, const std::vector<Call>& calls, StagingBlock* block,
                       uint32_t gen) {
  weftResult_t r = waitStreamReady(comm, block, gen, calls.front());
  if (r == weftSuccess) r = executeCalls(comm, calls);
  if (r != weftSuccess) failStreamCall(comm, r);
  __atomic_store_n(block->done, gen, __ATOMIC_RELEASE);
  return r;
}

}  // namespace weft
