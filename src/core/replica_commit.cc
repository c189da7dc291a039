// One replica commit, run by the communicator's progress thread in the four
// steps of core/replica.h.
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
// compute the same placement), else all refuse alike before any data moves.
weftResult_t agreeOnCommit(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make) {
  int64_t values[4] = {static_cast<int64_t>(v), -static_cast<int64_t>(v), rep->copies,
                       -rep->copies};
  Call agree = make.allreduce(values, 4, weftMax);
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
  return weftSuccess;
}

// Where a holder's slot for the version lies, for its owner to write into
// directly (ranks of one node that map each other's weftHostAlloc memory,
// transports/shm/node_memory.h); `region.inode` 0: it cannot be mapped.
struct SlotOffer {
  uint64_t addr;
  HostRegion region;
  uint64_t frees;  // the holder's hostFreeCount(), so the owner drops stale mappings
};

// The owner's word to a holder once its one-sided write is done (the holder
// marks its slot only then); `wrote` 0: the bytes follow as a send instead.
// Ordering: the owner's stores (streaming, fenced by copyStreaming) come
// before it sends the note, and the channel's release/acquire (or the
// kernel's socket) orders the holder's later reads of the slot after it.
struct WriteNote {
  uint64_t version;
  uint64_t wrote;
};

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

// Step 3 on one node whose ranks map each other's memory: holders offer
// their slots, owners write straight into them (one copy, no FIFO and no
// receiver CPU), then tell each holder; a slot that cannot be mapped gets the
// bytes as a send. theirs[i] and slots[i]: what owner held[i] announced, and its slot.
weftResult_t writeIntoSlots(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make,
                            const std::vector<CommitHeader>& theirs,
                            const std::vector<void*>& slots) {
  weftComm* comm = rep->comm;
  const std::vector<int>& holders = rep->buddies[comm->rank];
  std::vector<SlotOffer> offers(holders.size()), mine(rep->held.size());
  std::vector<Call> calls;
  for (size_t i = 0; i < rep->held.size(); ++i) {
    mine[i] = SlotOffer{reinterpret_cast<uint64_t>(slots[i]),
                        findHostRegion(slots[i], theirs[i].bytes), hostFreeCount()};
    calls.push_back(make.send(&mine[i], sizeof(SlotOffer), rep->held[i].owner));
  }
  for (size_t k = 0; k < holders.size(); ++k)
    calls.push_back(make.recv(&offers[k], sizeof(SlotOffer), holders[k]));
  WEFT_CHECK(executeCalls(comm, calls));
  std::vector<WriteNote> notes(holders.size()), got(rep->held.size());
  for (size_t k = 0; k < holders.size(); ++k) {
    char* at = nullptr;
    comm->node->noteFrees(holders[k], offers[k].frees);
    if (offers[k].region.inode != 0 &&
        comm->node->map(holders[k], offers[k].region, offers[k].addr, &at) == weftSuccess &&
        at != nullptr) {
      copyStreaming(at, rep->buffer, rep->bytes);
      notes[k] = WriteNote{v, 1};
    } else {
      clearError();  // not mapped: sent below
      notes[k] = WriteNote{v, 0};
    }
  }
  if (!rep->pathLogged) {
    int inPlace = 0;
    for (const WriteNote& n : notes) inPlace += static_cast<int>(n.wrote);
    WEFT_INFO(COLL,
              "rank %d: replica commits write %d of %zu holder slot(s) in place (shared "
              "memory) and send the rest",
              comm->rank, inPlace, holders.size());
    rep->pathLogged = true;
  }
  calls.clear();
  for (size_t k = 0; k < holders.size(); ++k)
    calls.push_back(make.send(&notes[k], sizeof(WriteNote), holders[k]));
  for (size_t i = 0; i < rep->held.size(); ++i)
    calls.push_back(make.recv(&got[i], sizeof(WriteNote), rep->held[i].owner));
  WEFT_CHECK(executeCalls(comm, calls));
  calls.clear();
  for (size_t k = 0; k < holders.size(); ++k)
    if (notes[k].wrote == 0) calls.push_back(make.send(rep->buffer, rep->bytes, holders[k]));
  for (size_t i = 0; i < rep->held.size(); ++i)
    if (got[i].wrote == 0)
      calls.push_back(make.recv(slots[i], theirs[i].bytes, rep->held[i].owner));
  if (!calls.empty()) WEFT_CHECK(executeCalls(comm, calls));
  return weftSuccess;
}

// Steps 2 and 3: headers, then the buffer to every holder and into our own
// slot; the slots written are marked with v once whole.
weftResult_t moveBuffers(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make, bool* ok) {
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
  // Every rank of the communicator decides alike: the node's memory exists
  // on all or none, and its sharing probe's answer is every rank's.
  if (comm->node && comm->node->sharing()) {
    WEFT_CHECK(writeIntoSlots(rep, v, make, theirs, slots));
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
  WEFT_CHECK(agreeOnCommit(rep, v, make));
  bool ok = true;
  WEFT_CHECK(moveBuffers(rep, v, make, &ok));
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
