// One replica commit, run by the communicator's progress thread in the four
// steps of core/replica.h (the third one-sided where it can be:
// core/replica_oneside.cc).
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/log.h"
#include "collectives/nontemporal_copy.h"
#include "core/comm.h"
#include "core/replica.h"

namespace weft {

namespace {

constexpr uint64_t kOwnCopyThreadMin = 4 << 20;

// What an owner tells each holder before its buffer: which version, how big.
struct CommitHeader {
  uint64_t version;
  uint64_t bytes;
};

// Step 1: every rank commits version v with the same copies (so that all
// compute the same placement), else all refuse alike before any data moves;
// and whether every rank can take part in one-sided writes (*oneSided).
weftResult_t agreeOnCommit(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make,
                           bool* oneSided) {
  const int64_t capable = replicaOneSidedCapable(rep) ? 1 : 0;
  int64_t values[5] = {static_cast<int64_t>(v), -static_cast<int64_t>(v), rep->copies, -rep->copies,
                       -capable};
  Call agree = make.allreduce(values, 5, weftMax);
  WEFT_CHECK(executeCalls(rep->comm, &agree, 1));
  if (values[0] != -values[1])
    return setError(weftInvalidUsage,
                    "weftReplicaCommit: the ranks commit different versions (%lld to %lld): one "
                    "rank skipped a commit or restore",
                    static_cast<long long>(-values[1]), static_cast<long long>(values[0]));
  if (values[2] != -values[3])
    return setError(weftInvalidUsage,
                    "weftReplicaCommit: the ranks registered different copies (%lld to %lld)",
                    static_cast<long long>(-values[3]), static_cast<long long>(values[2]));
  *oneSided = -values[4] == 1;  // the least capable rank's word
  return weftSuccess;
}

// Step 2: the headers, then each holder's slot for them.
weftResult_t exchangeHeaders(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make,
                             std::vector<CommitHeader>* theirs, std::vector<void*>* slots) {
  weftComm* comm = rep->comm;
  const CommitHeader mine{v, rep->bytes};
  theirs->assign(rep->held.size(), CommitHeader{});
  std::vector<Call> calls;
  for (int h : rep->buddies[comm->rank]) calls.push_back(make.send(&mine, sizeof(mine), h));
  for (size_t i = 0; i < rep->held.size(); ++i)
    calls.push_back(make.recv(&(*theirs)[i], sizeof(CommitHeader), rep->held[i].owner));
  WEFT_CHECK(executeCalls(comm, calls));
  slots->assign(rep->held.size(), nullptr);
  for (size_t i = 0; i < rep->held.size(); ++i) {
    // A holder that cannot make room breaks the communicator: its owner's
    // next message still needs a receive, and the peers then fail at once
    // instead of waiting.
    weftResult_t r = rep->held[i].slotFor(v, (*theirs)[i].bytes, &(*slots)[i]);
    if (r != weftSuccess) {
      const std::string text = "weftReplicaCommit: " + lastError();
      comm->markBroken(r, text);
      return setErrorString(r, text);
    }
  }
  return weftSuccess;
}

// Steps 2 and 3: headers, then the buffer to every holder and into our own
// slot; the slots written are marked with v once whole.
weftResult_t moveBuffers(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make, bool oneSided,
                         bool* ok) {
  weftComm* comm = rep->comm;
  std::vector<CommitHeader> theirs;
  std::vector<void*> slots;
  WEFT_CHECK(exchangeHeaders(rep, v, make, &theirs, &slots));
  for (const CommitHeader& h : theirs)
    if (h.version != v) *ok = false;

  void* own = nullptr;
  WEFT_CHECK(rep->own.slotFor(v, rep->bytes, &own));
  // Our own copy overlaps the transfers on another core: the transports
  // mostly wait on the peers and the wire, and a large copy is as long as
  // a transfer of its size. Streaming stores: the slot is not read soon, and
  // they spare the memory bandwidth the transfers share.
  std::thread ownCopy;
  if (rep->bytes >= kOwnCopyThreadMin)
    ownCopy = std::thread([own, rep] { copyStreaming(own, rep->buffer, rep->bytes); });
  else
    std::memcpy(own, rep->buffer, rep->bytes);
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{ownCopy};
  if (oneSided) {  // every rank's decision (step 1)
    std::vector<uint64_t> theirBytes;
    for (const CommitHeader& h : theirs) theirBytes.push_back(h.bytes);
    WEFT_CHECK(writeReplicaOneSided(rep, v, make, theirBytes, slots));
  } else {
    if (!rep->pathLogged)
      WEFT_INFO(COLL, "rank %d: replica commits send to %zu holder(s)", comm->rank,
                rep->buddies[comm->rank].size());
    rep->pathLogged = true;
    std::vector<Call> calls;
    for (int h : rep->buddies[comm->rank]) calls.push_back(make.send(rep->buffer, rep->bytes, h));
    for (size_t i = 0; i < rep->held.size(); ++i)
      calls.push_back(make.recv(slots[i], theirs[i].bytes, rep->held[i].owner));
    WEFT_CHECK(executeCalls(comm, calls));
  }
  if (ownCopy.joinable()) ownCopy.join();
  const int slot = static_cast<int>(v % 2);
  rep->own.version[slot] = v;
  for (ReplicaCopy& copy : rep->held) copy.version[slot] = v;
  return weftSuccess;
}

}  // namespace

weftResult_t runReplicaCommit(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make) {
  bool oneSided = false;
  WEFT_CHECK(agreeOnCommit(rep, v, make, &oneSided));
  bool ok = true;
  WEFT_CHECK(moveBuffers(rep, v, make, oneSided, &ok));
  // Step 4: finishing this allreduce means every rank finished step 3.
  int64_t verdict = ok ? 1 : 0;
  Call last = make.allreduce(&verdict, 1, weftMin);
  WEFT_CHECK(executeCalls(rep->comm, &last, 1));
  if (verdict != 1)
    return setError(weftInternalError,
                    "weftReplicaCommit: a holder received another version than %llu",
                    static_cast<unsigned long long>(v));
  rep->lastComplete.store(v, std::memory_order_release);
  return weftSuccess;
}

}  // namespace weft
