// Collectives and point-to-point calls: each maps to weft's call of the same
// shape once its communicator, datatype, op and stream are translated
// (shim_common.cc). Gather and scatter, which weft has no call for, are a
// group of sends and receives, as NCCL builds them.
#include "base/datatype.h"
#include "base/error.h"
#include "shim.h"

using namespace weft;
using namespace weft::nccl;

namespace {

// The translated arguments of one call.
struct Args {
  weftComm_t comm = nullptr;
  weftDataType_t type = weftFloat;
  weftRedOp_t op = weftSum;
};

ncclResult_t prepare(const char* fn, ncclComm_t comm, ncclDataType_t dt, bool reduces,
                     ncclRedOp_t op, Args* out) {
  if (ncclResult_t r = weftOf(comm, fn, &out->comm)) return r;
  if (ncclResult_t r = weftType(dt, reduces, fn, &out->type)) return r;
  if (reduces) return weftOp(op, fn, &out->op);
  return ncclSuccess;
}

// Gather (toRoot) or scatter: rank r's block of `count` elements moves
// between its own buffer and block r of root's. The root's own block is a
// send to itself unless the call is in place.
ncclResult_t rootedBlocks(const char* fn, bool toRoot, const void* sendbuff, void* recvbuff,
                          size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                          cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare(fn, comm, datatype, false, ncclSum, &a)) return r;
  int rank = 0, nranks = 0;
  weftCommUserRank(a.comm, &rank);
  weftCommCount(a.comm, &nranks);
  if (root < 0 || root >= nranks)
    return fail(ncclInvalidArgument, "%s: root=%d is not a rank of this communicator (0..%d)", fn,
                root, nranks - 1);
  const size_t block = count * datatypeSize(a.type);
  const char* rootBuf = static_cast<const char*>(toRoot ? recvbuff : sendbuff);
  const void* mine = toRoot ? sendbuff : recvbuff;
  if (rank == root && count > 0 && rootBuf == nullptr)
    return fail(ncclInvalidArgument, "%s: %s is NULL on the root", fn,
                toRoot ? "recvbuff" : "sendbuff");
  const bool inPlace = rank == root && mine == rootBuf + static_cast<size_t>(root) * block;
  const weftStream_t ws = weftStream(stream, sendbuff, recvbuff);
  if (weftResult_t r = weftGroupStart()) return toNccl(r);
  weftResult_t r = weftSuccess;
  if (rank == root) {
    for (int peer = 0; peer < nranks && r == weftSuccess; ++peer) {
      if (peer == root && inPlace) continue;
      char* at = const_cast<char*>(rootBuf) + static_cast<size_t>(peer) * block;
      r = toRoot ? weftRecv(at, count, a.type, peer, a.comm, ws)
                 : weftSend(at, count, a.type, peer, a.comm, ws);
    }
  }
  if (r == weftSuccess && !inPlace)
    r = toRoot ? weftSend(mine, count, a.type, root, a.comm, ws)
               : weftRecv(const_cast<void*>(mine), count, a.type, root, a.comm, ws);
  if (r == weftSuccess) return toNccl(weftGroupEnd());
  // The blocks recorded before the failure must not run: ending the group
  // as a simulation drops them (and their call numbers).
  const std::string text = weftGetLastError(nullptr);
  float unused = 0;
  weftGroupSimulateEnd(&unused);
  return fail(toNccl(r), "%s: %s", fn, text.c_str());
}

}  // namespace

extern "C" {

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclAllReduce", comm, datatype, true, op, &a)) return r;
  return toNccl(weftAllReduce(sendbuff, recvbuff, count, a.type, a.op, a.comm,
                              weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclReduce", comm, datatype, true, op, &a)) return r;
  return toNccl(weftReduce(sendbuff, recvbuff, count, a.type, a.op, root, a.comm,
                           weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclReduceScatter", comm, datatype, true, op, &a)) return r;
  return toNccl(weftReduceScatter(sendbuff, recvbuff, recvcount, a.type, a.op, a.comm,
                                  weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclBroadcast", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(weftBroadcast(sendbuff, recvbuff, count, a.type, root, a.comm,
                              weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclBcast", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(weftBcast(buff, count, a.type, root, a.comm, weftStream(stream, buff, nullptr)));
}

ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclAllGather", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(weftAllGather(sendbuff, recvbuff, sendcount, a.type, a.comm,
                              weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclAlltoAll", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(weftAllToAll(sendbuff, recvbuff, count, a.type, a.comm,
                             weftStream(stream, sendbuff, recvbuff)));
}

ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return rootedBlocks("ncclGather", true, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return rootedBlocks("ncclScatter", false, sendbuff, recvbuff, count, datatype, root, comm,
                      stream);
}

ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclSend", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(
      weftSend(sendbuff, count, a.type, peer, a.comm, weftStream(stream, sendbuff, nullptr)));
}

ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream) {
  Args a;
  if (ncclResult_t r = prepare("ncclRecv", comm, datatype, false, ncclSum, &a)) return r;
  return toNccl(
      weftRecv(recvbuff, count, a.type, peer, a.comm, weftStream(stream, recvbuff, nullptr)));
}

}  // extern "C"

WEFT_NCCL_ALIAS(AllReduce)
WEFT_NCCL_ALIAS(Reduce)
WEFT_NCCL_ALIAS(ReduceScatter)
WEFT_NCCL_ALIAS(Broadcast)
WEFT_NCCL_ALIAS(Bcast)
WEFT_NCCL_ALIAS(AllGather)
WEFT_NCCL_ALIAS(AlltoAll)
WEFT_NCCL_ALIAS(Gather)
WEFT_NCCL_ALIAS(Scatter)
WEFT_NCCL_ALIAS(Send)
WEFT_NCCL_ALIAS(Recv)
