// The slots of a replica's copies and the placement of a replica on its
// communicator's ranks (core/replica.h).
#include <algorithm>
#include <utility>

#include "base/error.h"
#include "base/host_memory.h"
#include "core/comm.h"
#include "core/replica.h"

namespace weft {

ReplicaCopy::ReplicaCopy(ReplicaCopy&& other) noexcept { *this = std::move(other); }

ReplicaCopy& ReplicaCopy::operator=(ReplicaCopy&& other) noexcept {
  if (this == &other) return *this;
  for (int i = 0; i < 2; ++i) freeSlot(i);
  owner = other.owner;
  bytes = other.bytes;
  for (int i = 0; i < 2; ++i) {
    data[i] = other.data[i];
    version[i] = other.version[i];
    region[i] = std::move(other.region[i]);
    other.data[i] = nullptr;
    other.version[i] = 0;
  }
  return *this;
}

ReplicaCopy::~ReplicaCopy() {
  for (int i = 0; i < 2; ++i) freeSlot(i);
}

void ReplicaCopy::freeSlot(int i) {
  region[i].reset();  // the NIC lets go of the pages before they are freed
  if (data[i] != nullptr) hostFree(data[i]);
  data[i] = nullptr;
  version[i] = 0;
}

weftResult_t ReplicaCopy::slotFor(uint64_t v, uint64_t size, void** out) {
  const int slot = static_cast<int>(v % 2);
  version[slot] = 0;  // empty until the caller has written all of it
  if (bytes != size) {
    // A new size (the owner is a process that registered anew): both slots go.
    for (int i = 0; i < 2; ++i) freeSlot(i);
    bytes = size;
  }
  if (data[slot] == nullptr) {
    weftResult_t r = hostAlloc(size, &data[slot]);
    if (r != weftSuccess) {
      data[slot] = nullptr;
      return setError(r, "a replica slot of %llu bytes (rank %d's copy): %s",
                      static_cast<unsigned long long>(size), owner, lastError().c_str());
    }
  }
  *out = data[slot];
  return weftSuccess;
}

namespace {
Call bytesCall(CollKind kind, const void* send, void* recv, size_t bytes, int peer,
               const ReplicaCallMaker& m) {
  Call c = makeCall(kind, send, recv, bytes, weftUint8, weftSum, 0, peer);
  c.seq = m.seq;
  c.turn = m.turn;
  return c;
}
}  // namespace

Call ReplicaCallMaker::send(const void* buf, size_t bytes, int peer) const {
  return bytesCall(CollKind::kSend, buf, nullptr, bytes, peer, *this);
}

Call ReplicaCallMaker::recv(void* buf, size_t bytes, int peer) const {
  return bytesCall(CollKind::kRecv, nullptr, buf, bytes, peer, *this);
}

Call ReplicaCallMaker::allreduce(int64_t* values, size_t count, weftRedOp_t op) const {
  Call c = bytesCall(CollKind::kAllReduce, values, values, count, -1, *this);
  c.args.datatype = weftInt64;
  c.args.op = op;
  return c;
}

std::vector<uint64_t> nodesOf(const weftComm* comm) {
  std::vector<uint64_t> nodes;
  for (const RankPlace& p : comm->places) nodes.push_back(p.node);
  return nodes;
}

void placeReplica(weftReplica* rep, std::vector<std::vector<int>> buddies) {
  const weftComm* comm = rep->comm;
  rep->buddies = std::move(buddies);
  std::vector<ReplicaCopy> kept;
  for (int owner : heldBy(rep->buddies, comm->rank)) {
    ReplicaCopy copy;
    for (auto* list : {&rep->held, &rep->retired})
      for (ReplicaCopy& old : *list)
        if (old.owner == owner && (old.data[0] != nullptr || old.data[1] != nullptr))
          copy = std::move(old);  // leaves `old` without data
    copy.owner = owner;
    kept.push_back(std::move(copy));
  }
  for (ReplicaCopy& old : rep->held)
    if (old.data[0] != nullptr || old.data[1] != nullptr) rep->retired.push_back(std::move(old));
  rep->retired.erase(std::remove_if(rep->retired.begin(), rep->retired.end(),
                                    [](const ReplicaCopy& c) {
                                      return c.data[0] == nullptr && c.data[1] == nullptr;
                                    }),
                     rep->retired.end());
  rep->held = std::move(kept);
  rep->own.owner = comm->rank;
}

}  // namespace weft
