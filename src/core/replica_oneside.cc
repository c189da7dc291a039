// A replica commit's third step written one-sided (core/replica.h): each
// holder offers the slot the version goes to, each owner writes its buffer
// straight into the slots it can reach (a peer's memory mapped on one node,
// or a verbs RDMA write into a registered slot: one copy, no FIFO, and no
// work on the holder's side), then tells each holder whether it did; the
// holders it could not reach get the bytes as a send.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/log.h"
#include "base/wait.h"
#include "collectives/nontemporal_copy.h"
#include "core/comm.h"
#include "core/replica.h"

namespace weft {

namespace {

// RDMA writes go in pieces of this size: below every NIC's largest message.
constexpr size_t kPutPiece = 4 << 20;

// Where a holder's slot for the version lies, for its owner to write into:
// `region.inode` 0: it cannot be mapped; `rdma` 0: no RDMA writes.
struct SlotOffer {
  uint64_t addr;
  HostRegion region;
  uint64_t frees;  // the holder's hostFreeCount(), so the owner drops stale mappings
  uint64_t nicAddr;
  uint32_t rkey;
  uint32_t rdma;
};

// How an owner wrote a holder's slot (kSent: the bytes follow as a send).
enum WriteWay : uint64_t { kSent = 0, kMapped = 1, kRdma = 2 };

// The owner's word to a holder once its one-sided write is done (the holder
// marks its slot only then). Ordering: a mapped write's stores (streaming,
// fenced by copyStreaming) come before the note is sent, and the channel's
// release/acquire (or the kernel's socket) orders the holder's later reads
// of the slot after it; RDMA writes are posted on the channel the note then
// goes through, and a reliable connection delivers the note only after the
// writes before it are placed (RemoteWrites' contract).
struct WriteNote {
  uint64_t version;
  uint64_t way;
};

// The verbs memory of the replica's communicator, or nullptr.
RdmaMemory* verbsMemory(const weftReplica* rep) {
  return rep->comm->ib != nullptr ? rep->comm->ib->rdma() : nullptr;
}

// Deregisters every region of the replica; the caller holds regionsMu.
void clearRegions(weftReplica* rep) {
  rep->bufferRegion.reset();
  for (auto* list : {&rep->held, &rep->retired})
    for (ReplicaCopy& copy : *list)
      for (auto& region : copy.region) region.reset();
  rep->regionsOn = nullptr;
  rep->regionsTried = false;
}

// Regions made on another communicator go; this one's buffer region is
// made once (nullptr when it cannot be: the commits then send).
void ensureBufferRegion(weftReplica* rep, RdmaMemory* memory) {
  std::lock_guard<std::mutex> lock(rep->regionsMu);
  if (rep->regionsOn != rep->comm) {
    clearRegions(rep);
    rep->regionsOn = rep->comm;
  }
  if (rep->regionsTried) return;
  rep->regionsTried = true;
  std::string why;
  rep->bufferRegion = memory->registerRegion(rep->buffer, rep->bytes, false, &why);
  if (rep->bufferRegion == nullptr)
    WEFT_INFO(COLL, "rank %d: replica buffer not registered for RDMA writes (%s); commits send",
              rep->comm->rank, why.c_str());
}

// Holder: the offer of `slot` (the slot of version v in `copy`).
SlotOffer offerSlot(weftReplica* rep, ReplicaCopy* copy, uint64_t v, void* slot, uint64_t bytes,
                    RdmaMemory* memory) {
  SlotOffer offer{};
  offer.addr = reinterpret_cast<uint64_t>(slot);
  offer.frees = hostFreeCount();
  if (rep->comm->node && rep->comm->node->sharing()) offer.region = findHostRegion(slot, bytes);
  if (memory == nullptr) return offer;
  std::unique_ptr<RdmaRegion>& region = copy->region[v % 2];
  if (region == nullptr) {
    std::string why;
    std::lock_guard<std::mutex> lock(rep->regionsMu);
    region = memory->registerRegion(slot, bytes, false, &why);
    if (region == nullptr)
      WEFT_INFO(COLL, "rank %d: rank %d's replica slot not registered for RDMA writes (%s)",
                rep->comm->rank, copy->owner, why.c_str());
  }
  if (region != nullptr) {
    offer.nicAddr = region->nicAddr;
    offer.rkey = region->rkey;
    offer.rdma = 1;
  }
  return offer;
}

// Owner: RDMA writes of the whole buffer into a holder's offered slot.
weftResult_t putBuffer(weftReplica* rep, RemoteWrites* writes, const SlotOffer& to, int holder) {
  const RdmaRegion& from = *rep->bufferRegion;
  Waiter waiter(rep->comm->waitPolicy());
  size_t done = 0;
  while (done < rep->bytes) {
    const size_t n = std::min(kPutPiece, rep->bytes - done);
    bool posted = false;
    WEFT_CHECK(
        writes->tryPut(from.nicAddr + done, from.lkey, to.nicAddr + done, to.rkey, n, &posted));
    if (posted) {
      done += n;
      waiter.progressed();
      continue;
    }
    switch (waiter.idle()) {
      case Waiter::Idle::kLook:
        break;
      case Waiter::Idle::kSleep:
        Waiter::nap();
        break;
      case Waiter::Idle::kAborted:
        return setError(weftRemoteError, "weftReplicaCommit: the communicator was aborted");
      case Waiter::Idle::kTimedOut:
        return setError(weftTimeout,
                        "weftReplicaCommit: no room to post RDMA writes to rank %d within "
                        "WEFT_TIMEOUT (%.0f s)",
                        holder, waiter.timeoutSec());
    }
  }
  return weftSuccess;
}

// Owner: how it writes holder k's offered slot (mapped, RDMA, or not: sent).
weftResult_t writeSlot(weftReplica* rep, int holder, const SlotOffer& offer, uint64_t* way) {
  weftComm* comm = rep->comm;
  *way = kSent;
  if (offer.region.inode != 0 && comm->node) {
    char* at = nullptr;
    comm->node->noteFrees(holder, offer.frees);
    if (comm->node->map(holder, offer.region, offer.addr, &at) == weftSuccess && at != nullptr) {
      copyStreaming(at, rep->buffer, rep->bytes);
      *way = kMapped;
      return weftSuccess;
    }
    clearError();  // not mapped: RDMA or a send
  }
  Channel* ch = comm->channels->sendChannel(holder, 0);  // the note's channel (p2p: stream 0)
  RemoteWrites* writes = ch != nullptr ? ch->remoteWrites() : nullptr;
  if (offer.rdma == 0 || rep->bufferRegion == nullptr || writes == nullptr) return weftSuccess;
  WEFT_CHECK(putBuffer(rep, writes, offer, holder));
  *way = kRdma;
  return weftSuccess;
}

void logPath(weftReplica* rep, const std::vector<WriteNote>& notes) {
  if (rep->pathLogged) return;
  int mapped = 0, rdma = 0;
  for (const WriteNote& n : notes) {
    mapped += n.way == kMapped ? 1 : 0;
    rdma += n.way == kRdma ? 1 : 0;
  }
  WEFT_INFO(COLL,
            "rank %d: replica commits write %d of %zu holder slot(s) in place (shared memory), "
            "%d with RDMA writes (verbs), and send the rest",
            rep->comm->rank, mapped, notes.size(), rdma);
  rep->pathLogged = true;
}

}  // namespace

bool replicaOneSidedCapable(const weftReplica* rep) {
  const weftComm* comm = rep->comm;
  return (comm->node && comm->node->sharing()) || verbsMemory(rep) != nullptr;
}

weftResult_t writeReplicaOneSided(weftReplica* rep, uint64_t v, const ReplicaCallMaker& make,
                                  const std::vector<uint64_t>& theirBytes,
                                  const std::vector<void*>& slots) {
  weftComm* comm = rep->comm;
  RdmaMemory* memory = verbsMemory(rep);
  if (memory != nullptr) ensureBufferRegion(rep, memory);
  const std::vector<int>& holders = rep->buddies[comm->rank];
  std::vector<SlotOffer> offers(holders.size()), mine(rep->held.size());
  std::vector<Call> calls;
  for (size_t i = 0; i < rep->held.size(); ++i) {
    mine[i] = offerSlot(rep, &rep->held[i], v, slots[i], theirBytes[i], memory);
    calls.push_back(make.send(&mine[i], sizeof(SlotOffer), rep->held[i].owner));
  }
  for (size_t k = 0; k < holders.size(); ++k)
    calls.push_back(make.recv(&offers[k], sizeof(SlotOffer), holders[k]));
  WEFT_CHECK(executeCalls(comm, calls));
  std::vector<WriteNote> notes(holders.size()), got(rep->held.size());
  for (size_t k = 0; k < holders.size(); ++k) {
    notes[k].version = v;
    WEFT_CHECK(writeSlot(rep, holders[k], offers[k], &notes[k].way));
  }
  logPath(rep, notes);
  calls.clear();
  for (size_t k = 0; k < holders.size(); ++k)
    calls.push_back(make.send(&notes[k], sizeof(WriteNote), holders[k]));
  for (size_t i = 0; i < rep->held.size(); ++i)
    calls.push_back(make.recv(&got[i], sizeof(WriteNote), rep->held[i].owner));
  WEFT_CHECK(executeCalls(comm, calls));
  calls.clear();
  for (size_t k = 0; k < holders.size(); ++k)
    if (notes[k].way == kSent) calls.push_back(make.send(rep->buffer, rep->bytes, holders[k]));
  for (size_t i = 0; i < rep->held.size(); ++i)
    if (got[i].way == kSent)
      calls.push_back(make.recv(slots[i], theirBytes[i], rep->held[i].owner));
  if (!calls.empty()) WEFT_CHECK(executeCalls(comm, calls));
  return weftSuccess;
}

void dropReplicaRegions(weftReplica* rep) {
  std::lock_guard<std::mutex> lock(rep->regionsMu);
  clearRegions(rep);
}

}  // namespace weft
