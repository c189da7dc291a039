// One communicator's part of an enqueue on a stream (one call, or a group's
// calls on that communicator), in steps, so that a group over several
// communicators can take every part's staging before it enqueues any stream
// operation, and queue a collective only once every part is enqueued
// (stream_group.h):
//   prepareStreamPart  plans the staging and takes a block; enqueues nothing
//   enqueueStreamPart  enqueues the part's operations on its stream
//   submitStreamPart   queues its collective to the progress thread
// A part whose collective will not run is given up with dropStreamPart when
// only prepared (its block goes back to the pool: nothing happened), or with
// cancelStreamPart when enqueued (its "done" is raised so that its stream
// passes; the stream then copies the staged inputs into the outputs, which
// are undefined, as after any failure).
#pragma once

#include <vector>

#include "core/call.h"
#include "device/staging_plan.h"
#include "device/staging_pool.h"

struct weftComm;

namespace weft {

struct StreamPart {
  weftComm* comm = nullptr;
  weftStream_t stream = nullptr;
  std::vector<StagedCall> staged;  // the calls, and how they are staged in `block`
  int device = -1;                 // of the device or managed buffers (-1: all pinned)
  StagingBlock* block = nullptr;   // held from prepare until submit, drop or cancel
};

// A broken communicator refuses calls at once, as on the host path (nothing
// is enqueued): its error, naming `fn`, or weftSuccess.
weftResult_t refuseIfBroken(weftComm* comm, const char* fn);
// Plans validated `calls` of `comm` on `stream` and takes their staging
// block. On failure nothing is held.
weftResult_t prepareStreamPart(weftComm* comm, const std::vector<Call>& calls, weftStream_t stream,
                               StreamPart* part);
void dropStreamPart(StreamPart* part);
// Enqueues the operations of a prepared part on its stream. On failure (a
// CUDA error) the part is given up: its stream is released if it already
// waits for "done"; its block goes back to the pool if nothing was enqueued;
// otherwise its "freed" is still enqueued behind what was, and the block
// stays in the pool until the stream raises it. Only when even that enqueue
// fails is the block abandoned (leaked: nobody can tell when the stream is
// past it).
weftResult_t enqueueStreamPart(StreamPart* part);
void cancelStreamPart(StreamPart* part);
void submitStreamPart(StreamPart* part);

}  // namespace weft
