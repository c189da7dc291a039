// Where the copies of each rank's replica live, and how a restore gets every
// rank back to one version (core/replica.h). Pure functions of what every rank
// knows alike (the ranks' nodes; the records a restore gathers), so that all
// ranks compute the same placement and the same plan, or the same refusal,
// without another round of messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

constexpr int kReplicaMaxCopies = WEFT_REPLICA_MAX_COPIES;
// Buffers one rank may hold for others: `copies` on balanced layouts, more
// where nodes differ in size (replicaBuddies bounds it by this).
constexpr int kReplicaMaxHeld = 4 * kReplicaMaxCopies;

// buddies[o]: the `copies` ranks that hold copies of rank o's buffer. Copies
// go to other nodes first (a node's loss must not take a rank and its
// copies), and every rank holds about `copies` buffers: ranks are visited
// node by node in turn (rank i of each node, then rank i+1), and each
// takes the next ranks in that order that are on another node and hold
// fewer than `copies`, then any with room, then the least loaded. Empty
// when nodeOf.size() < 2 or copies is not in 1..nodeOf.size()-1.
std::vector<std::vector<int>> replicaBuddies(const std::vector<uint64_t>& nodeOf, int copies);

// The owners whose copies `rank` holds under `buddies`, ascending.
std::vector<int> heldBy(const std::vector<std::vector<int>>& buddies, int rank);

// One buffer a rank holds for another: its size and the versions in its two
// slots (0: empty).
struct ReplicaHeldRecord {
  int32_t owner;
  int32_t pad;
  uint64_t bytes;
  uint64_t version[2];
};

// What each rank brings to a restore (gathered from all). A wire record, read
// only by ranks of the same build.
struct ReplicaRecord {
  uint64_t lastComplete;  // newest version this rank saw complete on every rank (0: none)
  uint64_t bytes;         // its registered bytes
  uint64_t local[2];      // versions in the two copies of its own buffer (0: empty)
  int32_t copies;
  int32_t nheld;
  ReplicaHeldRecord held[kReplicaMaxHeld];
};

// A buffer moved by a restore: `from` sends rank `owner`'s version to `to`.
// A fetch lands in the owner's own buffer (from = the holder of a copy); a
// refill lands in a slot of a new holder (from = the owner, once fetched).
struct ReplicaMove {
  int from;
  int to;
  int owner;
};

struct RestorePlan {
  uint64_t version = 0;    // the version every rank resumes from
  std::string problem;     // non-empty: no restore; the same sentence on every rank
  std::vector<int> local;  // ranks that copy the version from their own copy
  std::vector<ReplicaMove> fetch;
  std::vector<ReplicaMove> refill;
};

// The restore of `records` (one per rank) to the newest version complete
// everywhere, onto the placement `buddies` (of the communicator restored
// onto); nodeOf picks a holder on the owner's node where there is one.
RestorePlan planRestore(const std::vector<ReplicaRecord>& records,
                        const std::vector<std::vector<int>>& buddies,
                        const std::vector<uint64_t>& nodeOf);

}  // namespace weft
