// Whether the ranks of a node can map each other's weftHostAlloc memory
// (memfd_create, then open through /proc/<pid>/fd): checked once per
// communicator, with one page, before the single-copy collectives rely on it
// for the outboxes and for shared user buffers. /proc may be mounted with
// hidepid, memfd may be filtered by a sandbox, a peer may sit in another pid
// namespace: then no rank shares, and every large call reads with
// cross-memory attach as before. All ranks agree on the answer.
#pragma once

#include <sys/types.h>

#include <vector>

#include "collectives/local_board.h"

namespace weft {

// *shared = true when every rank mapped every peer's probe page and read the
// word written there. Fails only when the board itself fails (timeout, abort).
weftResult_t probeSharing(LocalBoard* board, const std::vector<pid_t>& pids,
                          const FlowRunOptions& run, bool* shared);

}  // namespace weft
