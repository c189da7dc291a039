// Timing recorded plans on the modelled network. An item takes the engine's
// per-message cost plus its bytes at its rate, starts when its flow's
// previous item is done and its dependencies are met, and lands one route
// latency later; a phase starts when the rank's previous one ended.
// Receive-side reductions are not timed.
//   exact: every rank's items, matched to their peers', event by event; the
//          items moving at a moment share each link equally (sim_exact.h);
//   phase: one rank's plan, every rank assumed to do the same shifted along
//          the ring (true of the flat ring only), at the max-min fair rates
//          of all ranks' flows (sim_network.h): items leave at the slowest
//          flow's rate, and a chunk's way around pays the mean hop's time
//          and latency. O(items of one rank + ranks).
#pragma once

#include <string>
#include <vector>

#include "sim_network.h"
#include "sim_record.h"

namespace weft {
namespace sim {

struct SimResult {
  double timeUs = 0;
  std::vector<std::pair<double, int>> busiest;  // (us of busy time, link), busiest first
};

// All ranks' plans (plans[r]); false with *why when a receive has no sender.
bool timeExact(const Cluster& c, const Network& net, const std::vector<RankPlans>& plans,
               double perMessageUs, SimResult* out, std::string* why);

// Rank `rank` (at ring position `pos` of `ring`) stands for all.
bool timePhase(const Cluster& c, const Network& net, const RankPlans& plan, int rank,
               const std::vector<int>& ring, double perMessageUs, SimResult* out, std::string* why);

}  // namespace sim
}  // namespace weft
