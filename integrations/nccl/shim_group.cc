// Groups. Collectives and point-to-point calls inside a group go to weft's
// own group (weftGroupStart/End), which fuses them. Communicators created
// inside a group start their creation at once, in the background, and the
// outermost ncclGroupEnd waits for all of them: this is how one thread
// creates the communicators of several GPUs (NCCL does not allow creations
// and collectives in one group, so their order does not matter).
#include <vector>

#include "base/error.h"
#include "shim.h"

namespace weft {
namespace nccl {
namespace {

struct ShimGroup {
  int depth = 0;
  std::vector<ncclComm_t> creations;
};
thread_local ShimGroup tlsGroup;

// Waits for the creations of the group that ends: the first failure wins.
ncclResult_t settleCreations() {
  std::vector<ncclComm_t> creations;
  creations.swap(tlsGroup.creations);
  ncclResult_t result = ncclSuccess;
  std::string text;
  for (ncclComm_t comm : creations) {
    if (!isLive(comm)) continue;  // destroyed or aborted inside the group
    const ncclResult_t r = settle(comm);
    if (r != ncclSuccess && result == ncclSuccess) {
      result = r;
      text = weftGetLastError(nullptr);
    }
  }
  if (result != ncclSuccess) fail(result, "%s", text.c_str());
  return result;
}

}  // namespace

bool inGroup() { return tlsGroup.depth > 0; }
void addGroupCreation(ncclComm_t comm) { tlsGroup.creations.push_back(comm); }

}  // namespace nccl
}  // namespace weft

using namespace weft;
using namespace weft::nccl;

extern "C" {

ncclResult_t pncclGroupStart() {
  clearError();
  ++tlsGroup.depth;
  return toNccl(weftGroupStart());
}

ncclResult_t pncclGroupEnd() {
  clearError();
  if (tlsGroup.depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd: no ncclGroupStart is open");
  --tlsGroup.depth;
  const ncclResult_t created = tlsGroup.depth == 0 ? settleCreations() : ncclSuccess;
  const std::string text = weftGetLastError(nullptr);
  const ncclResult_t ran = toNccl(weftGroupEnd());
  if (created != ncclSuccess) return fail(created, "%s", text.c_str());
  return ran;
}

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  const char* fn = "ncclGroupSimulateEnd";
  clearError();
  if (simInfo == nullptr) return fail(ncclInvalidArgument, "%s: simInfo is NULL", fn);
  if (simInfo->magic != 0x74685283u || simInfo->size < sizeof(ncclSimInfo_t))
    return fail(ncclInvalidArgument,
                "%s: simInfo was not initialised with NCCL_SIM_INFO_INITIALIZER", fn);
  if (tlsGroup.depth == 0) return fail(ncclInvalidUsage, "%s: no ncclGroupStart is open", fn);
  --tlsGroup.depth;
  if (tlsGroup.depth == 0)
    if (ncclResult_t r = settleCreations()) return r;
  float us = 0;
  if (weftResult_t r = weftGroupSimulateEnd(&us)) return toNccl(r);
  simInfo->estimatedTime = us;
  return ncclSuccess;
}

}  // extern "C"

WEFT_NCCL_ALIAS(GroupStart)
WEFT_NCCL_ALIAS(GroupEnd)
WEFT_NCCL_ALIAS(GroupSimulateEnd)
