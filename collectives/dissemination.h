// Radix-R dissemination: ceil(log_R n) steps in which a rank sends to the
// ranks j * R^k ahead of it (1 <= j < R, j * R^k < n) and hears from those
// behind; what a step sends includes everything the steps before brought, so
// after the last step every rank has heard from every other, directly or
// passed on. With n <= R it is one step to every peer. The call check
// (header_plan.h) passes headers this way, and the barrier over channels is
// one.
#pragma once

#include <vector>

#include "collectives/coll_context.h"

namespace weft {

// The offsets of each step, for n ranks and radix R (at least 2).
std::vector<std::vector<int>> disseminationSchedule(int nranks, int radix);
// The same, kept for this thread's last (n, R): a communicator's calls (the
// check and the barrier, at their default radix alike) compute it once.
const std::vector<std::vector<int>>& cachedDisseminationSchedule(int nranks, int radix);

// The radix of the barrier below: up to this many ranks it is one round.
constexpr int kBarrierRadix = 8;

// The barrier over channels. With the call check pending (it runs the same
// schedule and returns only once every rank's header reached this rank, so
// every rank has entered) it is the check alone; else one byte per message
// of the schedule above.
weftResult_t disseminationBarrier(CollContext& ctx);

}  // namespace weft
