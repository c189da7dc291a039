// The tuner's part of dispatch (dispatch_tuned.cc).
#pragma once

#include "core/call.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {
// Runs `call` when it is the tuner's (or a forced topology-aware algorithm's)
// to run, setting *result; false: dispatch.cc's own paths run it.
bool runTuned(weftComm* comm, const Call& call, weftResult_t* result);

// The one-round forms outside the tuner (one node, auto mode): a rank
// receives every peer's message, so their cost grows with (n-1) x the
// message, and they run while that stays within a limit (and the message
// within WEFT_ONESHOT_MAX). Allreduce also reduces what it receives, so its
// limit is lower. Over loopback TCP allreduce's one round beats the ring and
// the tree up to about 32 KiB at 3-4 ranks and 8 KiB at 8, and allgather's
// direct form beats the ring up to 32 KiB per rank at 4 ranks and 16 KiB at 8
// (docs/performance-history.md has the runs). At 2 ranks both forms move
// what the ring moves, and the limits cost nothing.
constexpr size_t kOneshotReceiveMax = 96 << 10;
constexpr size_t kDirectGatherReceiveMax = 128 << 10;
bool oneRoundFits(const weftComm* comm, size_t bytes, size_t receiveMax);
// Allreduce's one round: oneRoundFits with kOneshotReceiveMax, and staging holds it.
bool oneshotFits(const weftComm* comm, size_t bytes);

// One node without shared memory (WEFT_SHM_DISABLE=1, or segments that could
// not be mapped), auto mode: an allreduce past the one-round limit takes the
// double binary tree up to 64 KiB when there are 3 or more ranks, then the
// ring. runSingleNodeTree runs it with the tuner's chunk for the tree.
bool singleNodeTreeFits(const weftComm* comm, size_t bytes);
weftResult_t runSingleNodeTree(weftComm* comm, const Call& call);
}  // namespace weft
