// A copy whose destination bypasses the cache (non-temporal stores), for the
// single-copy collectives writing large outputs, often into a peer's buffer:
// a normal store first reads the destination line into the cache (one more
// trip to memory per line written) and then evicts something useful, while a
// streaming store writes the line straight to memory. With two cores sharing
// memory bandwidth that extra read is a large part of the cost.
#pragma once

#include <cstddef>

namespace weft {

// memcpy(dst, src, bytes) with streaming stores where the CPU has them (any
// x86-64); the ranges must not overlap. Ends with a store fence: streaming
// stores are weakly ordered, and the caller's next release store (a barrier
// flag that lets peers read dst) must not become visible before them.
void copyStreaming(void* dst, const void* src, size_t bytes);

}  // namespace weft
