// The host-staged, stream-ordered path of calls on a stream (stream_call.h).
//
// Enqueued on the caller's stream, for one staging block of generation g:
//   copies in (user -> staging)  ; write ready := g ; wait done >= g ;
//   copies out (staging -> user) ; write freed := g
// and, on the progress thread, in API call order: wait ready >= g (bounded by
// WEFT_TIMEOUT, watching abort), run the calls on the staging memory, write
// done := g. Who writes what, and why the ordering holds:
//  - ready: the stream writes it after its copies in completed, with a fence
//    (device_runtime.h); the progress thread's acquire load then sees the
//    staged inputs.
//  - done: the progress thread's release store follows its writes of the
//    results; the stream's wait lets the copies out start only after it.
//  - freed: written by the stream after the copies out; the pool reuses the
//    block only after an acquire load sees it (staging_pool.h).
// done is written on every path, failures included, so a stream never waits
// forever; the communicator's abort and destruction raise it for every block
// still in use.
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "core/comm.h"
#include "core/error.h"
#include "core/wait.h"
#include "device/device_runtime.h"
#include "device/staging_plan.h"
#include "device/staging_pool.h"
#include "device/stream_call.h"

namespace weft {
namespace {

// The failure that broke `comm` (weftSuccess: none).
weftResult_t failureOf(weftComm* comm) {
  std::lock_guard<std::mutex> lock(comm->failMu);
  return comm->failure;
}

// Waits for the stream to reach the call (its "ready"). Gives up on abort, at
// WEFT_TIMEOUT, when the communicator is being destroyed and its closeBy
// passed (one bound for all pending calls, not one per call), and once the
// communicator is broken: the call could not run anyway, and raising "done"
// at once releases its stream (a stalled stream's calls then all fail at the
// first timeout instead of one timeout after another).
weftResult_t waitReady(weftComm* comm, const StagingBlock* block, uint32_t gen, const Call& first) {
  Deadline deadline = Deadline::after(comm->config.timeoutSec);
  Backoff backoff(comm->config.spinUs);
  while (!flagReached(__atomic_load_n(block->ready, __ATOMIC_ACQUIRE), gen)) {
    if (comm->aborted.load(std::memory_order_relaxed))
      return setError(weftInvalidUsage, "rank %d: %s on a stream: comm was aborted", comm->rank,
                      describeCall(first).c_str());
    if (deadline.expired())
      return setError(weftTimeout,
                      "rank %d: %s on a stream: the stream did not reach the call within "
                      "WEFT_TIMEOUT=%g s (is it blocked, or waiting on something that waits for "
                      "this call?)",
                      comm->rank, describeCall(first).c_str(), deadline.seconds());
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
    switch (backoff.next()) {
      case Backoff::Step::kSpin:
        break;
      case Backoff::Step::kYield:
        sched_yield();
        break;
      case Backoff::Step::kSleep:
        usleep(50);
        break;
    }
  }
  return weftSuccess;
}

// The progress thread's part of the calls in `block` (see the top of the file).
weftResult_t runStaged(weftComm* comm, const std::vector<Call>& calls, StagingBlock* block,
                       uint32_t gen) {
  weftResult_t r = waitReady(comm, block, gen, calls.front());
  if (r == weftSuccess) r = executeCalls(comm, calls);
  if (r != weftSuccess) {
    // No caller is waiting for this result: it becomes the async error.
    comm->markBroken(r, lastError() + " (a call on a CUDA stream; its outputs are undefined)");
  }
  __atomic_store_n(block->done, gen, __ATOMIC_RELEASE);
  return r;
}

// From the classification validateCall kept in `call` (buffer_check.cc):
// whether all its buffers are pinned host memory, and the device of the first
// device or managed one (-1 if none).
weftResult_t inspect(const Call& call, int rank, int nranks, bool* allPinned, int* device) {
  if (!call.classified)
    return setError(weftInternalError, "%s on a stream: its buffers were never classified",
                    describeCall(call).c_str());
  BufferUse uses[2];
  const int n = buffersOf(call, rank, nranks, uses);
  *allPinned = true;
  for (int i = 0; i < n; ++i) {
    const PointerInfo& info = call.buffers[i];
    if (info.kind != MemKind::kPinnedHost) *allPinned = false;
    if (*device < 0 && (info.kind == MemKind::kDevice || info.kind == MemKind::kManaged))
      *device = info.device;
  }
  return weftSuccess;
}

// An enqueue that failed part-way: peers will run these calls and we will
// not, so the communicator is broken (they learn at once); a stream that
// already waits on the block is released.
weftResult_t enqueueFailed(weftComm* comm, const char* fn, weftResult_t r, StagingBlock* block,
                           bool streamWaits) {
  std::string text = std::string(fn) + ": could not enqueue on the stream: " + lastError();
  if (block != nullptr) {
    if (streamWaits) __atomic_store_n(block->done, block->gen, __ATOMIC_RELEASE);
    comm->streamStaging->abandon(block);
  }
  comm->markBroken(r, "rank " + std::to_string(comm->rank) + ": " + text);
  return setErrorString(r, text);
}

}  // namespace

// Quadratic in the group's calls, which is cheap next to the two copies each
// call enqueues.
weftResult_t checkStreamGroup(const char* fn, const std::vector<Call>& calls, int rank,
                              int nranks) {
  for (size_t j = 1; j < calls.size(); ++j) {
    BufferUse later[2];
    const int nl = buffersOf(calls[j], rank, nranks, later);
    for (int b = 0; b < nl; ++b) {
      if (std::strcmp(later[b].name, "sendbuff") != 0) continue;
      const char* lo = static_cast<const char*>(later[b].ptr);
      for (size_t i = 0; i < j; ++i) {
        BufferUse earlier[2];
        const int ne = buffersOf(calls[i], rank, nranks, earlier);
        for (int a = 0; a < ne; ++a) {
          if (std::strcmp(earlier[a].name, "recvbuff") != 0) continue;
          const char* out = static_cast<const char*>(earlier[a].ptr);
          if (lo < out + earlier[a].bytes && out < lo + later[b].bytes)
            return setError(weftInvalidUsage,
                            "%s: call %zu of the group (%s) reads sendbuff that call %zu (%s) "
                            "writes; on a stream a group's inputs are all staged before its "
                            "first call runs: end the group between the two",
                            fn, j + 1, describeCall(calls[j]).c_str(), i + 1,
                            describeCall(calls[i]).c_str());
        }
      }
    }
  }
  return weftSuccess;
}

weftResult_t enqueueOnStream(weftComm* comm, const char* fn, const std::vector<Call>& calls,
                             weftStream_t stream) {
  {
    // As on the host path: a broken communicator refuses the call at once
    // (and nothing is enqueued on the stream).
    std::lock_guard<std::mutex> lock(comm->failMu);
    if (comm->failure != weftSuccess)
      return setError(comm->failure, "%s: communicator is broken by an earlier failure: %s", fn,
                      comm->failureText.c_str());
  }
  DeviceRuntime* rt = deviceRuntime();
  std::vector<StagedCall> staged(calls.size());
  size_t bytes = 0;
  int device = -1;
  for (size_t i = 0; i < calls.size(); ++i) {
    bool allPinned = true;
    WEFT_CHECK(inspect(calls[i], comm->rank, comm->nranks, &allPinned, &device));
    planCall(calls[i], comm->rank, comm->nranks, allPinned, &bytes, &staged[i]);
  }
  if (!comm->streamStaging) comm->streamStaging.reset(new StagingPool(rt));
  int saved = -1;
  weftResult_t r = rt->beginEnqueue(device, &saved);
  if (r != weftSuccess) return enqueueFailed(comm, fn, r, nullptr, false);
  StagingBlock* block = nullptr;
  r = comm->streamStaging->acquire(bytes, &block);
  if (r != weftSuccess) {
    rt->endEnqueue(saved);
    return enqueueFailed(comm, fn, r, nullptr, false);
  }
  const uint32_t gen = block->gen;
  std::vector<Call> run;
  run.reserve(staged.size());
  for (StagedCall& sc : staged) {
    placeCall(&sc, block->data);
    run.push_back(sc.call);
  }
  bool streamWaits = false;
  for (const StagedCall& sc : staged)
    for (const StagedCopy& c : sc.in)
      if (r == weftSuccess) r = rt->copyAsync(block->data + c.offset, c.user, c.bytes, stream);
  if (r == weftSuccess) r = rt->writeFlagAsync(block->ready, gen, stream);
  if (r == weftSuccess) r = rt->waitFlagAsync(block->done, gen, stream);
  streamWaits = r == weftSuccess;
  for (const StagedCall& sc : staged)
    for (const StagedCopy& c : sc.out)
      if (r == weftSuccess) r = rt->copyAsync(c.user, block->data + c.offset, c.bytes, stream);
  if (r == weftSuccess) r = rt->writeFlagAsync(block->freed, gen, stream);
  rt->endEnqueue(saved);
  if (r != weftSuccess) return enqueueFailed(comm, fn, r, block, streamWaits);

  auto* req = new weftRequest();
  req->detached = true;  // nobody waits for it: the stream does
  req->work = [comm, run = std::move(run), block, gen] { return runStaged(comm, run, block, gen); };
  comm->progress.submit(req);
  return weftSuccess;
}

}  // namespace weft
