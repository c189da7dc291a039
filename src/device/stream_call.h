// Collectives on CUDA buffers, enqueued on the caller's stream (weft.h: a
// non-NULL weftStream_t). The first CUDA path is host-staged and
// stream-ordered: on the stream, inputs are copied into pinned staging, a
// "ready" flag is raised, the stream waits for "done", copies the results
// back and raises "freed"; the call returns as soon as that is enqueued. The
// collective itself is a request queued at call time to the communicator's
// progress thread (so calls keep API order with host calls on every rank),
// which waits for "ready", runs the host collective on the staging memory and
// raises "done" — also when it fails, after recording the failure as the
// communicator's async error (the outputs are then undefined, as in NCCL).
#pragma once

#include <vector>

#include "core/call.h"

struct weftComm;

namespace weft {

// The buffer checks of one call (after the argument checks of validateCall):
// with a stream, the stream must be usable and the buffers device, managed or
// pinned memory, all of one device; without one (host semantics), no buffer
// may be device memory. Sentences name the argument. What each buffer is goes
// into call->buffers (and call->classified), which the stream path uses.
weftResult_t checkCallBuffers(weftComm* comm, const char* fn, Call* call, weftStream_t stream);

// Enqueues validated `calls` of `comm` (one call, or one group's calls on this
// communicator, all on `stream`) and queues their request; returns without
// waiting for the stream or the peers. A group over several communicators
// goes through enqueueStreamGroup (stream_group.h) instead.
weftResult_t enqueueOnStream(weftComm* comm, const char* fn, const std::vector<Call>& calls,
                             weftStream_t stream);

}  // namespace weft
