// A communicator's life after creation: queries, asynchronous errors, split,
// shrink, revoke, finalize, destroy and abort.
#include <vector>

#include "base/error.h"
#include "shim.h"

namespace weft {
namespace nccl {
namespace {

// A child of `parent` (split, shrink): its config, or the parent's.
ncclComm_t newChild(ncclComm_t parent, const ncclConfig_t* config, const char* fn,
                    ncclResult_t* r) {
  auto* child = new ncclComm();
  child->cudaDev = parent->cudaDev;
  child->blocking = parent->blocking;
  child->name = parent->name;
  *r = config == nullptr ? ncclSuccess : applyConfig(config, fn, child);
  if (*r != ncclSuccess) {
    delete child;
    return nullptr;
  }
  return child;
}

}  // namespace
}  // namespace nccl
}  // namespace weft

using namespace weft;
using namespace weft::nccl;

extern "C" {

ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommCount", &w)) return r;
  return toNccl(weftCommCount(w, count));
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommUserRank", &w)) return r;
  return toNccl(weftCommUserRank(w, rank));
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommCuDevice", &w)) return r;
  if (device == nullptr) return fail(ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
  *device = comm->cudaDev;
  return ncclSuccess;
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  const char* fn = "ncclCommGetAsyncError";
  clearError();
  if (asyncError == nullptr) return fail(ncclInvalidArgument, "%s: asyncError is NULL", fn);
  if (!isLive(comm)) return fail(ncclInvalidArgument, "%s: comm is not a live communicator", fn);
  {
    std::lock_guard<std::mutex> hold(comm->settleMu);
    if (comm->async) {
      std::lock_guard<std::mutex> lock(comm->async->mu);
      if (comm->async->running) {
        *asyncError = ncclInProgress;
        return ncclSuccess;
      }
    }
  }
  if (ncclResult_t r = settle(comm)) {
    *asyncError = r;
    return ncclSuccess;
  }
  weftResult_t failure = weftSuccess;
  if (comm->weft != nullptr)
    if (weftResult_t q = weftCommGetAsyncError(comm->weft, &failure)) return toNccl(q);
  *asyncError = toNccl(failure);
  return ncclSuccess;
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config) {
  const char* fn = "ncclCommSplit";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  if (newcomm == nullptr) return fail(ncclInvalidArgument, "%s: newcomm is NULL", fn);
  *newcomm = nullptr;
  ncclResult_t r;
  ncclComm_t child = newChild(comm, config, fn, &r);
  if (child == nullptr) return r;
  if (color == NCCL_SPLIT_NOCOLOR) child->blocking = true;  // this rank gets no handle to poll
  return handOut(child, newcomm, fn, [w, color, key](weftComm_t* out) {
    return weftCommSplit(w, color, key, out, nullptr);
  });
}

ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  const char* fn = "ncclCommShrink";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  if (newcomm == nullptr) return fail(ncclInvalidArgument, "%s: newcomm is NULL", fn);
  *newcomm = nullptr;
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
    return fail(ncclInvalidArgument, "%s: shrinkFlags=%d is not an NCCL_SHRINK_* flag", fn,
                shrinkFlags);
  if (excludeRanksCount < 0 || (excludeRanksCount > 0 && excludeRanksList == nullptr))
    return fail(ncclInvalidArgument, "%s: excludeRanksList holds no %d ranks", fn,
                excludeRanksCount);
  if (shrinkFlags == NCCL_SHRINK_ABORT)
    if (weftResult_t q = weftCommRevoke(w)) return toNccl(q);
  ncclResult_t r;
  ncclComm_t child = newChild(comm, config, fn, &r);
  if (child == nullptr) return r;
  std::vector<int> exclude(excludeRanksList, excludeRanksList + excludeRanksCount);
  return handOut(child, newcomm, fn, [w, exclude](weftComm_t* out) {
    return weftCommShrink(w, exclude.data(), static_cast<int>(exclude.size()), out);
  });
}

ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  const char* fn = "ncclCommRevoke";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  if (revokeFlags != NCCL_REVOKE_DEFAULT)
    return fail(ncclInvalidArgument, "%s: revokeFlags=%d must be NCCL_REVOKE_DEFAULT (0)", fn,
                revokeFlags);
  return toNccl(weftCommRevoke(w));
}

// Waits for this rank's work on comm and frees weft's communicator; the
// handle stays for ncclCommGetAsyncError and ncclCommDestroy.
ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommFinalize", &w)) return r;
  comm->weft = nullptr;
  comm->finalized = true;
  return runCreation(comm, "ncclCommFinalize", [w](weftComm_t* out) {
    *out = nullptr;
    return weftCommDestroy(w);
  });
}

ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  clearError();
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  if (!isLive(comm))
    return fail(ncclInvalidArgument, "ncclCommDestroy: comm is not a live communicator");
  settle(comm);  // a failed creation leaves nothing to destroy
  clearError();
  ncclResult_t result = ncclSuccess;
  if (comm->weft != nullptr) result = toNccl(weftCommDestroy(comm->weft));
  unregisterComm(comm);
  delete comm;
  return result;
}

ncclResult_t pncclCommAbort(ncclComm_t comm) {
  clearError();
  if (comm == nullptr) return ncclSuccess;  // as NCCL
  if (!isLive(comm))
    return fail(ncclInvalidArgument, "ncclCommAbort: comm is not a live communicator");
  bool left = false;
  {
    std::lock_guard<std::mutex> hold(comm->settleMu);
    if (comm->async) {  // a creation still running is left to finish and free what it made
      std::lock_guard<std::mutex> lock(comm->async->mu);
      comm->async->abandoned = true;
      if (comm->async->running) {
        comm->worker.detach();
        left = true;
      }
    }
  }
  if (!left) settle(comm);
  clearError();
  ncclResult_t result = ncclSuccess;
  if (comm->weft != nullptr) result = toNccl(weftCommAbort(comm->weft));
  unregisterComm(comm);
  delete comm;
  return result;
}

}  // extern "C"

WEFT_NCCL_ALIAS(CommCount)
WEFT_NCCL_ALIAS(CommUserRank)
WEFT_NCCL_ALIAS(CommCuDevice)
WEFT_NCCL_ALIAS(CommGetAsyncError)
WEFT_NCCL_ALIAS(CommSplit)
WEFT_NCCL_ALIAS(CommShrink)
WEFT_NCCL_ALIAS(CommRevoke)
WEFT_NCCL_ALIAS(CommFinalize)
WEFT_NCCL_ALIAS(CommDestroy)
WEFT_NCCL_ALIAS(CommAbort)
