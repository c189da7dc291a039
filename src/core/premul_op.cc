// weftRedOpCreatePreMulSum / weftRedOpDestroy and the resolution of an op
// handle in a call (premul_op.h).
#include "core/premul_op.h"

#include <cstring>

#include "base/datatype.h"
#include "base/device_runtime.h"
#include "base/error.h"
#include "core/call.h"
#include "core/comm.h"

using namespace weft;

namespace weft {
namespace {

bool scalarInDeviceMemory(const void* ptr) {
  DeviceRuntime* rt = deviceRuntime();
  PointerInfo info;
  return rt->mayHaveDeviceMemory() && rt->classify(ptr, &info) == weftSuccess &&
         info.kind == MemKind::kDevice;
}

// The live entry an op handle names, or nullptr. Called with ops.mu held.
UserRedOps::Entry* liveEntry(UserRedOps& ops, int raw) {
  const long index = static_cast<long>(raw) - weftNumOps;
  if (raw < weftNumOps || index >= static_cast<long>(ops.entries.size())) return nullptr;
  UserRedOps::Entry& e = ops.entries[static_cast<size_t>(index)];
  return e.live ? &e : nullptr;
}

}  // namespace

weftResult_t resolveUserOp(weftComm* comm, const char* fn, Call* call, weftStream_t stream) {
  const int raw = rawEnum(call->args.op);
  UserRedOps& ops = comm->userOps;
  std::lock_guard<std::mutex> lock(ops.mu);
  const UserRedOps::Entry* live = liveEntry(ops, raw);
  if (live == nullptr)
    return setError(weftInvalidArgument,
                    "%s: op=%d is neither a weftRedOp_t nor a live op of "
                    "weftRedOpCreatePreMulSum on this communicator",
                    fn, raw);
  const UserRedOps::Entry& e = *live;
  if (rawEnum(call->args.datatype) != static_cast<int>(e.datatype))
    return setError(weftInvalidArgument,
                    "%s: op=%d was created for datatype %s, but the call's datatype is %s", fn, raw,
                    datatypeName(e.datatype), datatypeName(call->args.datatype));
  if (e.read != nullptr && stream == nullptr && scalarInDeviceMemory(e.read))
    return setError(weftInvalidArgument,
                    "%s: op=%d reads its scalar from device memory, which a call on host "
                    "memory (stream NULL) cannot; create it with weftScalarHostImmediate",
                    fn, raw);
  call->args.op = kOpPreMulSum;
  call->premul.read = e.read;
  std::memcpy(call->premul.value, e.value, sizeof e.value);
  return weftSuccess;
}

}  // namespace weft

extern "C" {

weftResult_t weftRedOpCreatePreMulSum(weftRedOp_t* op, void* scalar, weftDataType_t datatype,
                                      weftScalarResidence_t residence, weftComm_t comm) {
  clearError();
  CommCall guard(comm, "weftRedOpCreatePreMulSum", false);
  WEFT_CHECK(guard.status());
  const char* fn = "weftRedOpCreatePreMulSum";
  if (op == nullptr) return setError(weftInvalidArgument, "%s: op is NULL", fn);
  if (scalar == nullptr) return setError(weftInvalidArgument, "%s: scalar is NULL", fn);
  const int rawType = rawEnum(datatype), rawResidence = rawEnum(residence);
  if (rawType < 0 || rawType >= weftNumTypes)
    return setError(weftInvalidArgument, "%s: datatype=%d is not a weftDataType_t", fn, rawType);
  if (rawResidence != weftScalarDevice && rawResidence != weftScalarHostImmediate)
    return setError(weftInvalidArgument,
                    "%s: residence=%d is neither weftScalarDevice nor weftScalarHostImmediate", fn,
                    rawResidence);
  UserRedOps::Entry e;
  e.live = true;
  e.datatype = datatype;
  if (residence == weftScalarHostImmediate) {
    if (scalarInDeviceMemory(scalar))
      return setError(weftInvalidArgument,
                      "%s: scalar is device memory, but residence is weftScalarHostImmediate "
                      "(use weftScalarDevice)",
                      fn);
    std::memcpy(e.value, scalar, datatypeSize(datatype));
  } else {
    e.read = scalar;
  }
  UserRedOps& ops = comm->userOps;
  std::lock_guard<std::mutex> lock(ops.mu);
  size_t slot = 0;
  while (slot < ops.entries.size() && ops.entries[slot].live) ++slot;
  if (slot + weftNumOps > static_cast<size_t>(weftMaxRedOp))
    return setError(weftInternalError, "%s: no op handle left", fn);
  if (slot == ops.entries.size())
    ops.entries.push_back(e);
  else
    ops.entries[slot] = e;
  *op = static_cast<weftRedOp_t>(weftNumOps + static_cast<int>(slot));
  return weftSuccess;
}

weftResult_t weftRedOpDestroy(weftRedOp_t op, weftComm_t comm) {
  clearError();
  CommCall guard(comm, "weftRedOpDestroy", false);
  WEFT_CHECK(guard.status());
  const int raw = rawEnum(op);
  UserRedOps& ops = comm->userOps;
  std::lock_guard<std::mutex> lock(ops.mu);
  UserRedOps::Entry* e = liveEntry(ops, raw);
  if (e == nullptr)
    return setError(weftInvalidArgument,
                    "weftRedOpDestroy: op=%d is not a live op of weftRedOpCreatePreMulSum on "
                    "this communicator",
                    raw);
  e->live = false;
  return weftSuccess;
}

}  // extern "C"
