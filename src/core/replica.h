// Replicas (weftReplicaRegister): copies of each rank's state in other ranks'
// host memory, committed in versions, so that after a failure every rank,
// a standby in a dead rank's place included, resumes from one version.
//
// Versions and atomicity. Each copy (the owner's own, and each holder's) has
// two slots; version v goes to slot v % 2, so the previous version stays
// intact while v is written. A commit runs on the progress thread in four
// steps: an allreduce that checks every rank commits the same version with
// the same copies; a header to each holder (version, size); the buffer to
// each holder and into the owner's own slot (written straight into the
// holder's slot where the two can, on one node whose ranks map each other's
// memory or over verbs with RDMA writes, then a note: core/replica_oneside.cc);
// a final allreduce. A rank that
// finishes the final allreduce knows every rank finished the third step, so
// version v is then whole everywhere: it sets lastComplete = v. A failure
// can leave ranks one version apart (one saw the end, another did not); the
// restore takes the newest lastComplete among the ranks, which is whole
// where any rank saw it. Version v+2 would overwrite v's slot, but no rank
// starts it before finishing v+1's final allreduce, so v is dropped only
// once v+1 is whole everywhere. Nothing lands in a holder's slot before the
// holder made it ready for that version: a two-sided receive it posts, or the
// slot it offers for one-sided writes after the header.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/call.h"
#include "core/replica_plan.h"
#include "transports/rdma_memory.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

// The two slots of one buffer (the owner's own copy, or one held for a peer).
struct ReplicaCopy {
  int owner = -1;
  uint64_t bytes = 0;
  void* data[2] = {nullptr, nullptr};  // hostAlloc'd: peers of a node map them
  uint64_t version[2] = {0, 0};        // 0: empty (or being written)
  // data[i] registered for its owner's RDMA writes (weftReplica::regionsOn's
  // verbs memory); dropped before data[i] is freed.
  std::unique_ptr<RdmaRegion> region[2];

  ReplicaCopy() = default;
  ReplicaCopy(const ReplicaCopy&) = delete;
  ReplicaCopy& operator=(const ReplicaCopy&) = delete;
  ReplicaCopy(ReplicaCopy&& other) noexcept;
  ReplicaCopy& operator=(ReplicaCopy&& other) noexcept;
  ~ReplicaCopy();
  // Slot `v % 2` sized for `size` bytes, marked empty until the caller fills it.
  weftResult_t slotFor(uint64_t v, uint64_t size, void** out);
  void freeSlot(int i);
};

}  // namespace weft

struct weftReplica {
  weftComm* comm = nullptr;
  void* buffer = nullptr;
  size_t bytes = 0;
  int copies = 0;
  std::vector<std::vector<int>> buddies;  // replicaBuddies of comm's ranks
  weft::ReplicaCopy own;                  // this rank's own two versions
  std::vector<weft::ReplicaCopy> held;    // the buffers it holds for heldBy(buddies, rank)
  // Copies a new placement no longer wants, kept until a restore finishes:
  // one that fails half way may still need them.
  std::vector<weft::ReplicaCopy> retired;
  // Written by the progress thread at the end of a commit, read by
  // weftReplicaVersion from the user's thread.
  std::atomic<uint64_t> lastComplete{0};
  uint64_t nextVersion = 1;               // the version the next commit writes (user's thread)
  std::atomic<int> inFlight{0};           // commits queued and not finished
  std::atomic<bool> needsRestore{false};  // a commit failed: its version is discarded
  bool pathLogged = false;                // the commits' path was logged (INFO, once)
  // Registrations for RDMA writes (the buffer's, and each copy's regions)
  // belong to the verbs memory of the communicator they were made on,
  // `regionsOn`, and must go before it does: a commit on another
  // communicator drops them, and so does the destruction of that one
  // (dropReplicaRegionsOf), whichever comes first. regionsMu guards the
  // pointers against the two; they are used only by commits on regionsOn.
  std::mutex regionsMu;
  const weftComm* regionsOn = nullptr;
  std::unique_ptr<weft::RdmaRegion> bufferRegion;
  bool regionsTried = false;  // bufferRegion was asked for on regionsOn (once)
};

namespace weft {

// The node of each of comm's ranks, as replicaBuddies reads them.
std::vector<uint64_t> nodesOf(const weftComm* comm);
// Places `replica` by `buddies` (replicaBuddies of its communicator's nodes):
// the owners' buffers it holds.
void placeReplica(weftReplica* replica, std::vector<std::vector<int>> buddies);
// The calls a commit or restore runs: bytes as weftUint8 (count = bytes), or
// a small allreduce; numbered `seq` (one API call) for error sentences.
struct ReplicaCallMaker {
  uint64_t seq;
  uint8_t turn;
  Call send(const void* buf, size_t bytes, int peer) const;
  Call recv(void* buf, size_t bytes, int peer) const;
  Call allreduce(int64_t* values, size_t count, weftRedOp_t op) const;
};
// The commit of version `version`, run by the progress thread (core/replica_commit.cc).
weftResult_t runReplicaCommit(weftReplica* replica, uint64_t version, const ReplicaCallMaker& make);
// Whether this rank can take part in one-sided commits on its communicator
// (its node's memory is shared, or it has verbs memory): every rank must, or
// all send (core/replica_oneside.cc).
bool replicaOneSidedCapable(const weftReplica* replica);
// The commit's third step, one-sided: holders offer slot theirs[i] (what
// owner held[i] announced: `theirBytes[i]`, into `slots[i]`), owners write
// into it where they can, tell each holder, and send the rest.
weftResult_t writeReplicaOneSided(weftReplica* replica, uint64_t version,
                                  const ReplicaCallMaker& make,
                                  const std::vector<uint64_t>& theirBytes,
                                  const std::vector<void*>& slots);
// Deregisters the replica's RDMA regions (under regionsMu).
void dropReplicaRegions(weftReplica* replica);
// Every live replica's regions made on `comm` go (its destruction, before its transports close).
void dropReplicaRegionsOf(const weftComm* comm);
// The restore onto `comm`, run by comm's progress thread (core/replica_restore.cc).
weftResult_t runReplicaRestore(weftReplica* replica, weftComm* comm, const ReplicaCallMaker& make,
                               uint64_t* version);

}  // namespace weft
