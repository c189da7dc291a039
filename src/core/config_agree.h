// Settings every rank must share. Some WEFT_* knobs choose the wire
// protocol, a transport, a buffer layout both ends share, or an algorithm
// (jobWideVars() in config_table.cc); a rank started with another value
// would hang at set-up or in its first call, or compute wrong results
// without a word (WEFT_CHECK_CALLS=0 on one rank did). So init compares them:
// one bootstrap allgather of a 64-bit digest per rank (8 bytes, small at any
// job size); where they differ, a second one of a hash per knob, and every
// rank fails with weftInvalidUsage naming the knob, the ranks that differ
// from rank 0, and its own value.
#pragma once

#include "bootstrap/bootstrap.h"
#include "weft/weft.h"

namespace weft {

weftResult_t checkJobWideConfig(Bootstrap& bs);

}  // namespace weft
