// Groups with calls on streams (weftGroupEnd): the checks of a group's stream
// calls, and the enqueue of its parts on every communicator as one unit.
#pragma once

#include <vector>

#include "core/call.h"

struct weftComm;

namespace weft {

// A group's calls on one communicator and stream are staged together: all
// inputs are copied in before the first call runs, so a call that read a
// sendbuff written by an earlier call of the group would read the old bytes.
// Such a group is refused (weftInvalidUsage, naming both calls) rather than
// silently wrong. weftGroupEnd checks every communicator's part before it
// enqueues any, so a refused group leaves nothing half enqueued.
weftResult_t checkStreamGroup(const char* fn, const std::vector<Call>& calls, int rank, int nranks);

// One communicator's validated calls of a group, all on one stream.
struct StreamGroupPart {
  weftComm* comm;
  const std::vector<Call>* calls;
};

// Enqueues every part and queues their collectives, or none: a broken
// communicator, or staging that cannot be allocated, fails the group before
// any stream operation is enqueued (and any staging taken is given back). A CUDA error while
// enqueuing a part's operations cannot be undone on the streams already enqueued: then no
// collective of the group is queued, the parts already enqueued are cancelled
// (their streams pass; their outputs are undefined), and the failing part is
// given up (stream_part.h). Breaking the communicators is the caller's job.
weftResult_t enqueueStreamGroup(const char* fn, const std::vector<StreamGroupPart>& parts);

}  // namespace weft
