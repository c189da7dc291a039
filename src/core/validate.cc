// Argument checks for every collective and point-to-point call. Each failure
// names the argument and its value, so the caller never has to guess.
#include <cstdint>
#include <cstring>

#include "base/error.h"
#include "collectives/reduce.h"
#include "core/call.h"
#include "core/comm.h"
#include "device/stream_call.h"

namespace weft {
namespace {

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && x < y + bn && y < x + an;
}

bool reduces(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduceScatter || k == CollKind::kReduce;
}

}  // namespace

namespace {

// The op of a reducing call, once the datatype is known to be weft's.
weftResult_t checkOp(const char* fn, const CollArgs& a, int rawOp) {
  // kOpPreMulSum: an op handle validateCall resolved (core/premul_op.h).
  if (rawOp < 0 || (rawOp >= weftNumOps && a.op != kOpPreMulSum))
    return setError(weftInvalidArgument, "%s: op=%d is not a weftRedOp_t", fn, rawOp);
  if (!datatypeReducible(a.datatype))
    return setError(weftInvalidArgument, "%s: datatype=%s cannot be reduced on host memory yet", fn,
                    datatypeName(a.datatype));
  if (a.op != kOpPreMulSum && !redOpApplies(a.datatype, a.op))
    return setError(weftInvalidArgument,
                    "%s: op=%s applies to the integer datatypes only, not to datatype=%s", fn,
                    redOpName(a.op), datatypeName(a.datatype));
  return weftSuccess;
}

// What a receive from any source needs (collectives/any_source.h).
weftResult_t checkAnySource(const weftComm* comm, const char* fn) {
  if (comm->nranks < 2)
    return setError(weftInvalidUsage, "%s: no other rank could send to this one", fn);
  if (!comm->config.checkCalls)
    return setError(weftInvalidUsage,
                    "%s: needs WEFT_CHECK_CALLS=1 (a send's size header tells it apart)", fn);
  return weftSuccess;
}

weftResult_t validateArgs(weftComm* comm, const char* fn, const Call& call) {
  const CollArgs& a = call.args;
  const int n = comm->nranks, me = comm->rank;
  if (call.kind == CollKind::kBarrier) return weftSuccess;
  // A C caller may pass any int as an enum: look at the raw value before the
  // enum is ever read as one (reading an out-of-range enum is undefined in C++).
  const int rawType = rawEnum(a.datatype), rawOp = rawEnum(a.op);
  if (rawType < 0 || rawType >= weftNumTypes)
    return setError(weftInvalidArgument, "%s: datatype=%d is not a weftDataType_t", fn, rawType);
  size_t esize = datatypeSize(a.datatype);
  if (reduces(call.kind)) WEFT_CHECK(checkOp(fn, a, rawOp));
  if (call.kind == CollKind::kBroadcast || call.kind == CollKind::kReduce) {
    if (a.root < 0 || a.root >= n)
      return setError(weftInvalidArgument, "%s: root=%d is not a rank of this communicator (0..%d)",
                      fn, a.root, n - 1);
  }
  if (call.anySource != nullptr) WEFT_CHECK(checkAnySource(comm, fn));
  if (isP2P(call.kind) && call.anySource == nullptr && (call.peer < 0 || call.peer >= n))
    return setError(weftInvalidArgument, "%s: peer=%d is not a rank of this communicator (0..%d)",
                    fn, call.peer, n - 1);
  // Byte sizes of the largest buffer involved must not overflow.
  bool perRankBlocks = call.kind == CollKind::kAllGather || call.kind == CollKind::kReduceScatter ||
                       call.kind == CollKind::kAllToAll;
  size_t parts = perRankBlocks ? static_cast<size_t>(n) : 1;
  if (a.count > SIZE_MAX / esize / parts || a.count * esize * parts > (SIZE_MAX >> 1))
    return setError(weftInvalidArgument, "%s: count=%zu of %s overflows the byte size", fn, a.count,
                    datatypeName(a.datatype));
  if (a.count == 0) return weftSuccess;
  const size_t bytes = a.count * esize;
  // Which buffers this rank touches.
  bool needSend =
      call.kind != CollKind::kRecv && (call.kind != CollKind::kBroadcast || me == a.root);
  bool needRecv = call.kind != CollKind::kSend && (call.kind != CollKind::kReduce || me == a.root);
  if (needSend && a.sendbuff == nullptr)
    return setError(weftInvalidArgument, "%s: sendbuff is NULL with count=%zu", fn, a.count);
  if (needRecv && a.recvbuff == nullptr)
    return setError(weftInvalidArgument, "%s: recvbuff is NULL with count=%zu", fn, a.count);
  if (!needSend || !needRecv) return weftSuccess;
  switch (call.kind) {
    case CollKind::kAllReduce:
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      if (a.sendbuff != a.recvbuff && overlaps(a.sendbuff, bytes, a.recvbuff, bytes))
        return setError(weftInvalidArgument,
                        "%s: sendbuff and recvbuff overlap without being equal (in place)", fn);
      break;
    case CollKind::kAllGather: {
      const char* own = static_cast<const char*>(a.recvbuff) + me * bytes;
      if (a.sendbuff != own && overlaps(a.sendbuff, bytes, a.recvbuff, bytes * n))
        return setError(
            weftInvalidArgument,
            "%s: sendbuff overlaps recvbuff but is not recvbuff + rank*sendcount (in place)", fn);
      break;
    }
    case CollKind::kReduceScatter: {
      const char* own = static_cast<const char*>(a.sendbuff) + me * bytes;
      if (a.recvbuff != own && overlaps(a.sendbuff, bytes * n, a.recvbuff, bytes))
        return setError(
            weftInvalidArgument,
            "%s: recvbuff overlaps sendbuff but is not sendbuff + rank*recvcount (in place)", fn);
      break;
    }
    case CollKind::kAllToAll:
      if (overlaps(a.sendbuff, bytes * n, a.recvbuff, bytes * n))
        return setError(weftInvalidArgument,
                        "%s: sendbuff and recvbuff overlap (all-to-all is not in place)", fn);
      break;
    default:
      break;
  }
  return weftSuccess;
}

}  // namespace

weftResult_t validateCall(weftComm* comm, const char* fn, Call* call, weftStream_t stream) {
  if (reduces(call->kind) && rawEnum(call->args.op) >= weftNumOps)
    WEFT_CHECK(resolveUserOp(comm, fn, call, stream));
  WEFT_CHECK(validateArgs(comm, fn, *call));
  return checkCallBuffers(comm, fn, call, stream);
}

}  // namespace weft
