// The tuner's part of dispatch (dispatch_tuned.cc).
#pragma once

#include "core/call.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {
// Runs `call` when it is the tuner's (or a forced topology-aware algorithm's)
// to run, setting *result; false: dispatch.cc's own paths run it.
bool runTuned(weftComm* comm, const Call& call, weftResult_t* result);
}  // namespace weft
