// The tuner's part of dispatch (dispatch_tuned.cc).
#pragma once

#include "core/call.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {
// Runs `call` when it is the tuner's (or a forced topology-aware algorithm's)
// to run, setting *result; false: dispatch.cc's own paths run it.
bool runTuned(weftComm* comm, const Call& call, weftResult_t* result);

// The one-round allreduce outside the tuner (one node, auto mode): a rank
// receives every peer's message, so its cost grows with (n-1) x the message,
// and it runs while that stays within kOneshotReceiveMax (and the message
// within WEFT_ONESHOT_MAX, and staging holds it). Over loopback TCP it beat
// the ring and the tree up to 32 KiB at 3-4 ranks, 8 KiB at 8, and past 64
// KiB at 2 (where 64 KiB used to be the limit at any size of job, and 4 ranks
// at 64 KiB took 190 us against the tree's 80).
constexpr size_t kOneshotReceiveMax = 96 << 10;
bool oneshotFits(const weftComm* comm, size_t bytes);
}  // namespace weft
