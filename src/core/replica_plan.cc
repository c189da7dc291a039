// Replica placement and restore planning (core/replica_plan.h).
#include "core/replica_plan.h"

#include <algorithm>
#include <map>

namespace weft {

namespace {

// Ranks node by node in turn: rank i of every node (nodes in the order of
// their lowest rank), then rank i+1, so that neighbours sit on other nodes.
std::vector<int> interleaveNodes(const std::vector<uint64_t>& nodeOf) {
  std::vector<uint64_t> order;
  std::map<uint64_t, std::vector<int>> ranksOf;
  for (int r = 0; r < static_cast<int>(nodeOf.size()); ++r) {
    if (ranksOf[nodeOf[r]].empty()) order.push_back(nodeOf[r]);
    ranksOf[nodeOf[r]].push_back(r);
  }
  std::vector<int> out;
  for (size_t i = 0; out.size() < nodeOf.size(); ++i)
    for (uint64_t node : order)
      if (i < ranksOf[node].size()) out.push_back(ranksOf[node][i]);
  return out;
}

// Whether `rec` holds `owner`'s `version` of `bytes` bytes.
bool holds(const ReplicaRecord& rec, int owner, uint64_t version, uint64_t bytes) {
  for (int i = 0; i < rec.nheld && i < kReplicaMaxHeld; ++i)
    if (rec.held[i].owner == owner && rec.held[i].bytes == bytes &&
        (rec.held[i].version[0] == version || rec.held[i].version[1] == version))
      return true;
  return false;
}

bool hasLocal(const ReplicaRecord& rec, uint64_t version) {
  return rec.local[0] == version || rec.local[1] == version;
}

}  // namespace

std::vector<std::vector<int>> replicaBuddies(const std::vector<uint64_t>& nodeOf, int copies) {
  const int n = static_cast<int>(nodeOf.size());
  if (n < 2 || copies < 1 || copies >= n) return {};
  const std::vector<int> ring = interleaveNodes(nodeOf);
  std::vector<std::vector<int>> buddies(n);
  std::vector<int> load(n, 0);
  for (int pos = 0; pos < n; ++pos) {
    const int owner = ring[pos];
    std::vector<int>& mine = buddies[owner];
    auto taken = [&](int r) {
      return r == owner || std::find(mine.begin(), mine.end(), r) != mine.end();
    };
    // Pass 0: another node, with room; pass 1: any rank with room.
    for (int pass = 0; pass < 2 && static_cast<int>(mine.size()) < copies; ++pass)
      for (int step = 1; step < n && static_cast<int>(mine.size()) < copies; ++step) {
        const int r = ring[(pos + step) % n];
        if (taken(r) || load[r] >= copies || (pass == 0 && nodeOf[r] == nodeOf[owner])) continue;
        mine.push_back(r);
        ++load[r];
      }
    while (static_cast<int>(mine.size()) < copies) {  // no room left: the least loaded
      int best = -1;
      for (int step = 1; step < n; ++step) {
        const int r = ring[(pos + step) % n];
        if (!taken(r) && (best < 0 || load[r] < load[best])) best = r;
      }
      mine.push_back(best);
      ++load[best];
    }
  }
  return buddies;
}

std::vector<int> heldBy(const std::vector<std::vector<int>>& buddies, int rank) {
  std::vector<int> owners;
  for (int o = 0; o < static_cast<int>(buddies.size()); ++o)
    if (std::find(buddies[o].begin(), buddies[o].end(), rank) != buddies[o].end())
      owners.push_back(o);
  return owners;
}

RestorePlan planRestore(const std::vector<ReplicaRecord>& records,
                        const std::vector<std::vector<int>>& buddies,
                        const std::vector<uint64_t>& nodeOf) {
  RestorePlan plan;
  const int n = static_cast<int>(records.size());
  for (const ReplicaRecord& rec : records) plan.version = std::max(plan.version, rec.lastComplete);
  if (plan.version == 0) {
    plan.problem = "no version was committed on every rank yet (weftReplicaCommit)";
    return plan;
  }
  for (int r = 0; r < n; ++r)
    if (records[r].copies != records[0].copies) {
      plan.problem =
          "the ranks registered different copies (rank 0: " + std::to_string(records[0].copies) +
          ", rank " + std::to_string(r) + ": " + std::to_string(records[r].copies) + ")";
      return plan;
    }
  const uint64_t v = plan.version;
  for (int o = 0; o < n; ++o) {
    if (hasLocal(records[o], v)) {
      plan.local.push_back(o);
      continue;
    }
    int from = -1;
    for (int h = 0; h < n; ++h) {
      if (h == o || !holds(records[h], o, v, records[o].bytes)) continue;
      // Prefer a holder on the owner's node (shared memory), then the lowest rank.
      if (from < 0 || (nodeOf[h] == nodeOf[o] && nodeOf[from] != nodeOf[o])) from = h;
    }
    if (from < 0) {
      plan.problem = "rank " + std::to_string(o) + "'s version " + std::to_string(v) +
                     " is lost: no live rank holds a copy of it (its holders died, or it "
                     "registered a different size)";
      return plan;
    }
    plan.fetch.push_back({from, o, o});
  }
  for (int o = 0; o < n && o < static_cast<int>(buddies.size()); ++o)
    for (int b : buddies[o])
      if (!holds(records[b], o, v, records[o].bytes)) plan.refill.push_back({o, b, o});
  return plan;
}

}  // namespace weft
