// The progress thread's side of a call on a stream (see the top of
// stream_part.cc for the whole protocol): wait until the stream reached the
// call ("ready"), run the calls on the staging memory, raise "done".
#pragma once

#include <cstdint>
#include <vector>

#include "core/call.h"
#include "device/staging_pool.h"

struct weftComm;

namespace weft {

// Waits until the stream raised "ready" of `block` for use `gen`. Gives up
// (an error naming `first`) on abort, at WEFT_TIMEOUT, when the communicator
// is being destroyed and its closeBy passed, and once it is broken.
weftResult_t waitStreamReady(weftComm* comm, const StagingBlock* block, uint32_t gen,
                             const Call& first);

// Makes the last error of a call on a stream the communicator's async error
// (nobody waits for its result) and breaks the communicator. Both the staged
// path and the GPU ring call it before they let the stream move on, so a
// caller that synchronised the stream finds the error.
void failStreamCall(weftComm* comm, weftResult_t r);

// Runs `calls` of `comm`, staged in `block` for its use `gen`, once the stream
// raised "ready"; raises "done" on every path, failures included (which
// become the communicator's async error: nobody waits for the result).
weftResult_t runStaged(weftComm* comm, const std::vector<Call>& calls, StagingBlock* block,
                       uint32_t gen);

}  // namespace weft
