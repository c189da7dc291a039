// One communicator's part of an enqueue on a stream (stream_part.h): the
// stream operations of the host-staged, stream-ordered path.
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
// still in use, and so does cancelStreamPart.
#include "device/stream_part.h"

#include "base/device_runtime.h"
#include "base/error.h"
#include "core/comm.h"
#include "device/stream_run.h"

namespace weft {
namespace {

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
  for (int i = 0; i < n; ++i)
    if (call.buffers[i].kind != MemKind::kPinnedHost) *allPinned = false;
  if (*device < 0) *device = deviceOfBuffers(call, n);
  return weftSuccess;
}

}  // namespace

weftResult_t refuseIfBroken(weftComm* comm, const char* fn) {
  std::lock_guard<std::mutex> lock(comm->failMu);
  if (comm->failure == weftSuccess) return weftSuccess;
  return setError(comm->failure, "%s: communicator is broken by an earlier failure: %s", fn,
                  comm->failureText.c_str());
}

weftResult_t prepareStreamPart(weftComm* comm, const std::vector<Call>& calls, weftStream_t stream,
                               StreamPart* part) {
  *part = StreamPart();
  part->comm = comm;
  part->stream = stream;
  part->staged.resize(calls.size());
  size_t bytes = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    bool allPinned = true;
    WEFT_CHECK(inspect(calls[i], comm->rank, comm->nranks, &allPinned, &part->device));
    planCall(calls[i], comm->rank, comm->nranks, allPinned, &bytes, &part->staged[i]);
  }
  if (!comm->streamStaging) comm->streamStaging.reset(new StagingPool(deviceRuntime()));
  WEFT_CHECK(comm->streamStaging->acquire(bytes, &part->block));
  for (StagedCall& sc : part->staged) placeCall(&sc, part->block->data);
  return weftSuccess;
}

void dropStreamPart(StreamPart* part) {
  if (part->block != nullptr) part->comm->streamStaging->release(part->block);
  part->block = nullptr;
}

weftResult_t enqueueStreamPart(StreamPart* part) {
  DeviceRuntime* rt = deviceRuntime();
  StagingBlock* block = part->block;
  const uint32_t gen = block->gen;
  void* stream = part->stream;
  int saved = -1;
  weftResult_t r = rt->beginEnqueue(part->device, &saved);
  if (r != weftSuccess) {
    dropStreamPart(part);
    return r;
  }
  int enqueued = 0;  // operations on the stream so far
  bool streamWaits = false;
  auto op = [&](weftResult_t result) {
    if (result == weftSuccess) ++enqueued;
    r = result;
  };
  for (const StagedCall& sc : part->staged)
    for (const StagedCopy& c : sc.in)
      if (r == weftSuccess) op(rt->copyAsync(block->data + c.offset, c.user, c.bytes, stream));
  if (r == weftSuccess) op(rt->writeFlagAsync(block->ready, gen, stream));
  if (r == weftSuccess) op(rt->waitFlagAsync(block->done, gen, stream));
  streamWaits = r == weftSuccess;
  for (const StagedCall& sc : part->staged)
    for (const StagedCopy& c : sc.out)
      if (r == weftSuccess) op(rt->copyAsync(c.user, block->data + c.offset, c.bytes, stream));
  if (r == weftSuccess) op(rt->writeFlagAsync(block->freed, gen, stream));
  rt->endEnqueue(saved);
  if (r == weftSuccess) return weftSuccess;
  if (enqueued == 0) {
    dropStreamPart(part);
    return r;
  }
  if (streamWaits) __atomic_store_n(block->done, gen, __ATOMIC_RELEASE);
  // The stream still runs what was enqueued. With its "freed" behind that, the
  // block stays in the pool, reusable (or freed at shutdown) once the stream is
  // past it; if even that cannot be enqueued, nobody can tell when the stream
  // is done with the block, and it is abandoned (leaked).
  const std::string why = lastError();
  bool freedEnqueued = rt->beginEnqueue(part->device, &saved) == weftSuccess;
  if (freedEnqueued) {
    freedEnqueued = rt->writeFlagAsync(block->freed, gen, stream) == weftSuccess;
    rt->endEnqueue(saved);
  }
  if (!freedEnqueued) part->comm->streamStaging->abandon(block);
  part->block = nullptr;
  return setErrorString(r, why);
}

void cancelStreamPart(StreamPart* part) {
  // The block stays in the pool, reusable once the stream raised "freed".
  __atomic_store_n(part->block->done, part->block->gen, __ATOMIC_RELEASE);
  part->block = nullptr;
}

void submitStreamPart(StreamPart* part) {
  std::vector<Call> run;
  run.reserve(part->staged.size());
  for (const StagedCall& sc : part->staged) run.push_back(sc.call);
  weftComm* comm = part->comm;
  StagingBlock* block = part->block;
  const uint32_t gen = block->gen;
  auto* req = new weftRequest();
  req->detached = true;  // nobody waits for it: the stream does
  req->work = [comm, run = std::move(run), block, gen] { return runStaged(comm, run, block, gen); };
  comm->progress.submit(req);
  part->block = nullptr;
}

}  // namespace weft
