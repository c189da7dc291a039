// Creating communicators: unique ids, ncclCommInitRank and its config,
// scalable and single-process forms. A creation runs at once, or on a
// background thread when the communicator is non-blocking (the caller polls
// ncclCommGetAsyncError) or a group is open (ncclGroupEnd waits for it, so
// that one thread can create the communicators of several GPUs).
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "shim.h"

namespace weft {
namespace nccl {

static_assert(sizeof(ncclUniqueId) == sizeof(weftUniqueId), "ids are copied verbatim");

ncclResult_t runCreation(ncclComm_t comm, const char* fn,
                         std::function<weftResult_t(weftComm_t*)> work) {
  if (comm->blocking && !inGroup()) {
    weftComm_t made = nullptr;
    if (weftResult_t r = work(&made)) return toNccl(r);
    comm->weft = made;
    if (made != nullptr) {
      weftCommCount(made, &comm->nranks);
      weftCommUserRank(made, &comm->rank);
    }
    return ncclSuccess;
  }
  auto async = std::make_shared<ShimAsync>();
  async->running = true;
  std::lock_guard<std::mutex> hold(comm->settleMu);
  comm->async = async;
  const int device = comm->cudaDev;
  comm->worker = std::thread([async, work = std::move(work), device] {
    selectDevice(device);
    weftComm_t made = nullptr;
    const weftResult_t r = work(&made);
    std::lock_guard<std::mutex> lock(async->mu);
    if (async->abandoned && made != nullptr) {  // aborted while it ran
      weftCommAbort(made);
      made = nullptr;
    }
    async->made = made;
    async->result = toNccl(r);
    if (r != weftSuccess) async->text = weftGetLastError(nullptr);
    async->running = false;
  });
  if (inGroup()) {
    addGroupCreation(comm);
    return ncclSuccess;
  }
  WEFT_INFO(INIT, "%s: non-blocking; poll ncclCommGetAsyncError", fn);
  return ncclInProgress;
}

ncclResult_t handOut(ncclComm_t comm, ncclComm_t* newcomm, const char* fn,
                     std::function<weftResult_t(weftComm_t*)> work) {
  registerComm(comm);
  const ncclResult_t r = runCreation(comm, fn, std::move(work));
  if ((r != ncclSuccess && r != ncclInProgress) ||
      (r == ncclSuccess && comm->weft == nullptr && !comm->async)) {  // failed, or in none
    unregisterComm(comm);
    delete comm;
    *newcomm = nullptr;
    return r;
  }
  *newcomm = comm;
  return r;
}

namespace {

ncclResult_t initRank(ncclComm_t* newcomm, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config, const char* fn) {
  clearError();
  if (newcomm == nullptr) return fail(ncclInvalidArgument, "%s: comm is NULL", fn);
  *newcomm = nullptr;
  auto* comm = new ncclComm();
  if (ncclResult_t r = applyConfig(config, fn, comm)) {
    delete comm;
    return r;
  }
  comm->rank = rank;
  comm->nranks = nranks;
  comm->cudaDev = currentDevice();
  weftUniqueId wid;
  std::memcpy(wid.internal, id.internal, sizeof(wid.internal));
  return handOut(comm, newcomm, fn, [nranks, wid, rank](weftComm_t* out) {
    return weftCommInitRank(out, nranks, wid, rank);
  });
}

}  // namespace
}  // namespace nccl
}  // namespace weft

using namespace weft;
using namespace weft::nccl;

extern "C" {

ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) {
  clearError();
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  weftUniqueId id;
  if (weftResult_t r = weftGetUniqueId(&id)) return toNccl(r);
  std::memcpy(uniqueId->internal, id.internal, sizeof(id.internal));
  return ncclSuccess;
}

ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config) {
  return initRank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

// weft's rendezvous needs one id: the root it names answers every rank. The
// others are accepted (they must be the same on every rank, as NCCL asks)
// and unused.
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config) {
  const char* fn = "ncclCommInitRankScalable";
  clearError();
  if (commIds == nullptr) return fail(ncclInvalidArgument, "%s: commIds is NULL", fn);
  if (nId < 1 || nId > nranks)
    return fail(ncclInvalidArgument, "%s: nId=%d must be 1..nranks (%d)", fn, nId, nranks);
  if (nId > 1) WEFT_INFO(INIT, "%s: %d ids given; weft's rendezvous uses the first", fn, nId);
  return initRank(newcomm, nranks, commIds[0], myrank, config, fn);
}

ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  const char* fn = "ncclCommInitAll";
  clearError();
  if (comms == nullptr) return fail(ncclInvalidArgument, "%s: comm is NULL", fn);
  if (ndev < 1) return fail(ncclInvalidArgument, "%s: ndev=%d must be at least 1", fn, ndev);
  std::vector<weftComm_t> made(static_cast<size_t>(ndev), nullptr);
  if (weftResult_t r = weftCommInitAll(made.data(), ndev, devlist)) return toNccl(r);
  const int current = currentDevice();
  for (int i = 0; i < ndev; ++i) {
    auto* comm = new ncclComm();
    comm->weft = made[i];
    comm->rank = i;
    comm->nranks = ndev;
    comm->cudaDev = devlist != nullptr ? devlist[i] : current;
    registerComm(comm);
    comms[i] = comm;
  }
  return ncclSuccess;
}

}  // extern "C"

WEFT_NCCL_ALIAS(GetUniqueId)
WEFT_NCCL_ALIAS(CommInitRank)
WEFT_NCCL_ALIAS(CommInitRankConfig)
WEFT_NCCL_ALIAS(CommInitRankScalable)
WEFT_NCCL_ALIAS(CommInitAll)
