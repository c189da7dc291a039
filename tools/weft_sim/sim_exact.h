// weft-sim's exact mode: an event-driven run of every rank's recorded items.
// A send item becomes ready when its flow's previous item is done, its
// dependencies are met and (for a phase's first items) the rank's previous
// phase has ended; it then spends the engine's per-message cost and moves its
// bytes. While it moves it shares each link it crosses equally with the other
// items moving there, and goes at its tightest link's share, recomputed at
// each instant where an item starts or stops on one of its links. The matching receive
// item at the peer completes one route latency after the last byte left.
#pragma once

#include <string>
#include <vector>

#include "sim_network.h"
#include "sim_record.h"

namespace weft {
namespace sim {

// The time (us) at which the slowest rank ends its last phase. False with
// *why when a receive has no sender, or the plans wait on each other.
// lateUs[r] (optional): when rank r enters the call (a straggler).
bool runExact(const Network& net, const std::vector<RankPlans>& plans, double perMessageUs,
              const std::vector<double>& lateUs, double* endUs, std::string* why);

}  // namespace sim
}  // namespace weft
