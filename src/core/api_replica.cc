// The replica entry points of the C ABI (core/replica.h): argument checks,
// and the commit and restore queued on the progress thread in call order.
#include <mutex>
#include <set>

#include "base/device_runtime.h"
#include "base/error.h"
#include "core/comm.h"
#include "core/replica.h"
#include "core/request_handles.h"

using namespace weft;

namespace {

// Live replicas: a freed or bogus handle is refused with a sentence.
std::mutex replicasMu;
std::set<const weftReplica*>& liveReplicas() {
  static std::set<const weftReplica*> live;
  return live;
}

weftResult_t checkReplica(const weftReplica* rep, const char* fn) {
  std::lock_guard<std::mutex> lock(replicasMu);
  if (rep == nullptr) return setError(weftInvalidArgument, "%s: replica is NULL", fn);
  if (liveReplicas().count(rep) == 0)
    return setError(weftInvalidArgument,
                    "%s: replica is not a live replica (deregistered, or never registered)", fn);
  return weftSuccess;
}

weftResult_t checkBuffer(const void* buffer, size_t bytes) {
  if (buffer == nullptr)
    return setError(weftInvalidArgument, "weftReplicaRegister: buffer is NULL");
  if (bytes == 0) return setError(weftInvalidArgument, "weftReplicaRegister: bytes is 0");
  DeviceRuntime* rt = deviceRuntime();
  PointerInfo info;
  if (rt->mayHaveDeviceMemory() && rt->classify(buffer, &info) == weftSuccess &&
      info.kind != MemKind::kHost)
    return setError(weftInvalidArgument,
                    "weftReplicaRegister: buffer is %s memory; replicas copy host memory (copy "
                    "device state to a host buffer first)",
                    memKindName(info.kind));
  return weftSuccess;
}

// Queues `work` on comm's progress thread behind the calls already queued.
weftRequest* queueWork(weftComm* comm, std::function<weftResult_t()> work) {
  auto* req = new weftRequest();
  req->work = std::move(work);
  comm->progress.submit(req);
  return req;
}

}  // namespace

namespace weft {

void dropReplicaRegionsOf(const weftComm* comm) {
  std::lock_guard<std::mutex> lock(replicasMu);
  for (const weftReplica* live : liveReplicas()) {
    auto* rep = const_cast<weftReplica*>(live);
    bool on = false;
    {
      std::lock_guard<std::mutex> regions(rep->regionsMu);
      on = rep->regionsOn == comm;
    }
    if (on) dropReplicaRegions(rep);
  }
}

}  // namespace weft

extern "C" {

weftResult_t weftReplicaRegister(weftComm_t comm, void* buffer, size_t bytes, int copies,
                                 weftReplica_t* replica) {
  clearError();
  const char* fn = "weftReplicaRegister";
  if (replica == nullptr) return setError(weftInvalidArgument, "%s: replica is NULL", fn);
  *replica = nullptr;
  CommCall guard(comm, fn);
  WEFT_CHECK(guard.status());
  WEFT_CHECK(checkBuffer(buffer, bytes));
  if (comm->nranks < 2)
    return setError(weftInvalidUsage, "%s: a replica needs a communicator of 2 or more ranks", fn);
  if (copies < 1 || copies > kReplicaMaxCopies || copies >= comm->nranks)
    return setError(weftInvalidArgument, "%s: copies is %d; it must be 1..%d on %d ranks", fn,
                    copies, std::min(kReplicaMaxCopies, comm->nranks - 1), comm->nranks);
  auto* rep = new weftReplica();
  rep->comm = comm;
  rep->buffer = buffer;
  rep->bytes = bytes;
  rep->copies = copies;
  placeReplica(rep, replicaBuddies(nodesOf(comm), copies));
  if (rep->held.size() > static_cast<size_t>(kReplicaMaxHeld)) {
    const size_t held = rep->held.size();
    delete rep;
    return setError(weftInvalidUsage,
                    "%s: rank %d would hold %zu copies (at most %d): the nodes differ too much in "
                    "size for %d copies",
                    fn, comm->rank, held, kReplicaMaxHeld, copies);
  }
  std::lock_guard<std::mutex> lock(replicasMu);
  liveReplicas().insert(rep);
  *replica = rep;
  return weftSuccess;
}

weftResult_t weftReplicaCommit(weftReplica_t replica, weftRequest_t* request) {
  clearError();
  const char* fn = "weftReplicaCommit";
  if (request == nullptr) return setError(weftInvalidArgument, "%s: request is NULL", fn);
  *request = nullptr;
  WEFT_CHECK(checkReplica(replica, fn));
  if (inGroup()) return setError(weftInvalidUsage, "%s: not inside a group", fn);
  if (replica->needsRestore.load(std::memory_order_acquire))
    return setError(weftInvalidUsage,
                    "%s: an earlier commit failed; weftReplicaRestore first (every rank goes "
                    "back to the last whole version)",
                    fn);
  CommCall guard(replica->comm, fn);
  WEFT_CHECK(guard.status());
  weftComm* comm = replica->comm;
  const ReplicaCallMaker make{++comm->seq, takeCallerTurn(comm)};
  const uint64_t version = replica->nextVersion++;
  replica->inFlight.fetch_add(1, std::memory_order_relaxed);
  weftRequest* req = queueWork(comm, [replica, version, make] {
    weftResult_t r = runReplicaCommit(replica, version, make);
    if (r != weftSuccess) replica->needsRestore.store(true, std::memory_order_release);
    // Release: a restore or deregister that sees 0 also sees the slots written.
    replica->inFlight.fetch_sub(1, std::memory_order_release);
    return r;
  });
  *request = handOutRequest(req);
  return weftSuccess;
}

weftResult_t weftReplicaVersion(weftReplica_t replica, uint64_t* version) {
  clearError();
  WEFT_CHECK(checkReplica(replica, "weftReplicaVersion"));
  if (version == nullptr)
    return setError(weftInvalidArgument, "weftReplicaVersion: version is NULL");
  *version = replica->lastComplete.load(std::memory_order_acquire);
  return weftSuccess;
}

weftResult_t weftReplicaRestore(weftReplica_t replica, weftComm_t comm, uint64_t* version) {
  clearError();
  const char* fn = "weftReplicaRestore";
  WEFT_CHECK(checkReplica(replica, fn));
  if (version == nullptr) return setError(weftInvalidArgument, "%s: version is NULL", fn);
  if (comm == nullptr) comm = replica->comm;
  if (inGroup()) return setError(weftInvalidUsage, "%s: not inside a group", fn);
  if (replica->inFlight.load(std::memory_order_acquire) != 0)
    return setError(weftInvalidUsage,
                    "%s: a commit of this replica is in flight; complete its request first", fn);
  CommCall guard(comm, fn);
  WEFT_CHECK(guard.status());
  const int registered = static_cast<int>(replica->buddies.size());
  if (comm->nranks != registered)
    return setError(weftInvalidUsage,
                    "%s: the replica was registered on %d ranks and comm has %d; a restore needs "
                    "a rank in every place (weftCommReplace with a standby for each dead rank)",
                    fn, registered, comm->nranks);
  const ReplicaCallMaker make{++comm->seq, takeCallerTurn(comm)};
  uint64_t restored = 0;
  weftRequest* req = queueWork(comm, [replica, comm, make, &restored] {
    return runReplicaRestore(replica, comm, make, &restored);
  });
  ProgressThread::waitFor(req);
  WEFT_CHECK(ProgressThread::finish(req));
  replica->nextVersion = restored + 1;
  replica->needsRestore.store(false, std::memory_order_release);
  *version = restored;
  return weftSuccess;
}

weftResult_t weftReplicaDeregister(weftReplica_t replica) {
  clearError();
  WEFT_CHECK(checkReplica(replica, "weftReplicaDeregister"));
  if (replica->inFlight.load(std::memory_order_acquire) != 0)
    return setError(weftInvalidUsage,
                    "weftReplicaDeregister: a commit of this replica is in flight; complete its "
                    "request first");
  {
    std::lock_guard<std::mutex> lock(replicasMu);
    liveReplicas().erase(replica);
  }
  delete replica;
  return weftSuccess;
}

}  // extern "C"
