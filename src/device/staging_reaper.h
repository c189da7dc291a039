// Frees the staging of communicators that are gone while a stream may still
// use it. When a communicator is destroyed or aborted, a stream can be stalled
// before some of its calls' copies: their staging block must outlive the
// communicator until the stream has made its last copy through it, which the
// stream announces by raising the block's `freed` flag to the block's
// generation (staging_pool.h). The reaper takes such blocks and frees each
// once it sees that flag, from a background thread that polls while it holds
// any block and exits when it holds none. A stream that never gets there
// keeps its block (freeing it would let the stream copy through freed memory).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/device_runtime.h"

namespace weft {

// Frees `mem` (pinned, from rt->allocPinned) once flagReached(*freed, gen).
// `freed` lies inside `mem`.
void reapWhenFreed(DeviceRuntime* rt, void* mem, const uint32_t* freed, uint32_t gen);

// Blocks the reaper still holds (for tests).
size_t reaperHeld();

}  // namespace weft
