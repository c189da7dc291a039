// A replica restore, run by the progress thread of the communicator restored
// onto: gather every rank's record, plan (core/replica_plan.h: the same plan,
// or the same refusal, on every rank), fetch lost buffers from their holders
// and refill the copies that the new placement lacks (two rounds of sends and
// receives), and agree that all is done.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "collectives/nontemporal_copy.h"
#include "core/comm.h"
#include "core/replica.h"

namespace weft {

namespace {

ReplicaRecord recordOf(const weftReplica* rep) {
  ReplicaRecord rec;
  std::memset(&rec, 0, sizeof(rec));
  rec.lastComplete = rep->lastComplete.load(std::memory_order_acquire);
  rec.bytes = rep->bytes;
  rec.copies = rep->copies;
  if (rep->own.bytes == rep->bytes)
    for (int i = 0; i < 2; ++i) rec.local[i] = rep->own.version[i];
  std::vector<const ReplicaCopy*> copies;
  for (const ReplicaCopy& copy : rep->held) copies.push_back(&copy);
  for (const ReplicaCopy& copy : rep->retired) copies.push_back(&copy);
  for (const ReplicaCopy* c : copies) {
    const ReplicaCopy& copy = *c;
    if (rec.nheld == kReplicaMaxHeld) break;  // the newest placement's come first
    ReplicaHeldRecord& h = rec.held[rec.nheld++];
    h.owner = copy.owner;
    h.bytes = copy.bytes;
    h.version[0] = copy.version[0];
    h.version[1] = copy.version[1];
  }
  return rec;
}

ReplicaCopy* heldCopy(weftReplica* rep, int owner) {
  for (auto* list : {&rep->held, &rep->retired})
    for (ReplicaCopy& copy : *list)
      if (copy.owner == owner && (copy.data[0] != nullptr || copy.data[1] != nullptr)) return &copy;
  for (ReplicaCopy& copy : rep->held)  // placed, not yet filled
    if (copy.owner == owner) return &copy;
  return nullptr;
}

// The data of version v in `copy`, or nullptr.
void* versionIn(const ReplicaCopy& copy, uint64_t v) {
  const int slot = static_cast<int>(v % 2);
  return copy.version[slot] == v ? copy.data[slot] : nullptr;
}

bool restoresLocally(const RestorePlan& plan, int rank) {
  return std::find(plan.local.begin(), plan.local.end(), rank) != plan.local.end();
}

// A receive of a refill into the copy placed for its owner.
weftResult_t refillInto(weftReplica* rep, const ReplicaMove& m, uint64_t v, uint64_t bytes,
                        const ReplicaCallMaker& make, std::vector<Call>* calls) {
  ReplicaCopy* copy = heldCopy(rep, m.owner);
  void* slot = nullptr;
  if (copy == nullptr)
    return setError(weftInternalError, "weftReplicaRestore: no copy placed for rank %d", m.owner);
  weftResult_t r = copy->slotFor(v, bytes, &slot);
  if (r != weftSuccess) {
    const std::string text = "weftReplicaRestore: " + lastError();
    rep->comm->markBroken(r, text);  // the owner's send would wait for this receive
    return setErrorString(r, text);
  }
  calls->push_back(make.recv(slot, bytes, m.owner));
  return weftSuccess;
}

// Round 1: lost buffers from their holders, and the refills whose owners
// restore from their own copy (sent from that copy), while those owners copy
// it into their buffers beside the transfers. Round 2: the refills whose
// owners were lost, from the buffers round 1 fetched.
weftResult_t moveCopies(weftReplica* rep, const RestorePlan& plan,
                        const std::vector<ReplicaRecord>& records, const ReplicaCallMaker& make,
                        int round) {
  const int me = rep->comm->rank;
  const uint64_t v = plan.version;
  std::vector<Call> calls;
  if (round == 1)
    for (const ReplicaMove& m : plan.fetch) {
      if (m.to == me) calls.push_back(make.recv(rep->buffer, rep->bytes, m.from));
      if (m.from != me) continue;
      const ReplicaCopy* copy = heldCopy(rep, m.owner);
      void* data = copy != nullptr ? versionIn(*copy, v) : nullptr;
      if (data == nullptr)  // the records said we hold it: they are ours, so never
        return setError(weftInternalError, "weftReplicaRestore: rank %d's copy is gone", m.owner);
      calls.push_back(make.send(data, copy->bytes, m.to));
    }
  for (const ReplicaMove& m : plan.refill) {
    if (restoresLocally(plan, m.owner) != (round == 1)) continue;
    if (m.from == me)
      calls.push_back(
          make.send(round == 1 ? versionIn(rep->own, v) : rep->buffer, rep->bytes, m.to));
    if (m.to == me) WEFT_CHECK(refillInto(rep, m, v, records[m.owner].bytes, make, &calls));
  }
  std::thread local;
  if (round == 1 && restoresLocally(plan, me))
    local =
        std::thread([rep, v] { copyStreaming(rep->buffer, versionIn(rep->own, v), rep->bytes); });
  weftResult_t r = executeCalls(rep->comm, calls);
  if (local.joinable()) local.join();
  return r;
}

// After the restore every copy holds v in its slot and nothing newer, and our
// own copy holds v too (a rank that fetched takes it from its buffer).
weftResult_t settle(weftReplica* rep, uint64_t v) {
  const int slot = static_cast<int>(v % 2);
  if (versionIn(rep->own, v) == nullptr) {
    void* own = nullptr;
    WEFT_CHECK(rep->own.slotFor(v, rep->bytes, &own));
    std::memcpy(own, rep->buffer, rep->bytes);
  }
  rep->own.version[slot] = v;
  rep->own.version[1 - slot] = 0;
  for (ReplicaCopy& copy : rep->held) {
    copy.version[slot] = v;  // refilled, or held already (the plan checked)
    copy.version[1 - slot] = 0;
  }
  rep->retired.clear();
  return weftSuccess;
}

}  // namespace

weftResult_t runReplicaRestore(weftReplica* rep, weftComm* comm, const ReplicaCallMaker& make,
                               uint64_t* version) {
  const int n = comm->nranks;
  std::vector<ReplicaRecord> records(n);
  records[comm->rank] = recordOf(rep);
  const ReplicaRecord mine = records[comm->rank];
  // An allgather of fixed records: a restore is rare, and this one round
  // lets every rank plan alike.
  Call gather = makeCall(CollKind::kAllGather, &mine, records.data(), sizeof(ReplicaRecord),
                         weftUint8, weftSum, 0, -1);
  gather.seq = make.seq;
  gather.turn = make.turn;
  WEFT_CHECK(executeCalls(comm, &gather, 1));

  const std::vector<uint64_t> nodes = nodesOf(comm);
  std::vector<std::vector<int>> buddies = replicaBuddies(nodes, rep->copies);
  const RestorePlan plan = planRestore(records, buddies, nodes);
  if (!plan.problem.empty())
    return setError(weftInvalidUsage, "weftReplicaRestore: %s", plan.problem.c_str());
  // RDMA registrations belong to the communicator they were made on: they
  // go before the replica moves (that one may be destroyed at any time).
  if (rep->comm != comm) dropReplicaRegions(rep);
  rep->comm = comm;
  placeReplica(
      rep, std::move(buddies));  // copies no longer placed stay readable (retired) until settled
  WEFT_CHECK(moveCopies(rep, plan, records, make, 1));
  WEFT_CHECK(moveCopies(rep, plan, records, make, 2));
  bool settled = settle(rep, plan.version) == weftSuccess;
  int64_t verdict = settled ? 1 : 0;
  Call last = make.allreduce(&verdict, 1, weftMin);
  WEFT_CHECK(executeCalls(comm, &last, 1));
  if (verdict != 1)
    return setError(weftSystemError, "weftReplicaRestore: a rank could not keep its own copy");
  rep->lastComplete.store(plan.version, std::memory_order_release);
  *version = plan.version;
  return weftSuccess;
}

}  // namespace weft
