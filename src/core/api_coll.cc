// Collective and point-to-point entry points of the C ABI. Each builds a Call,
// validates it (the sentence names the argument), then records it in the open
// group, runs it (blocking form: inline when nothing is queued, else behind
// the queued requests, keeping call order), or queues it (non-blocking form).
#include "base/error.h"
#include "core/call.h"
#include "core/comm.h"
#include "core/request_handles.h"
#include "device/stream_call.h"

using namespace weft;

namespace {

const char* const kNotOutstanding =
    "request is not an outstanding request of weft (completed already, through this handle or "
    "a copy of it, or never returned by a weft*Async call)";

weftResult_t submit(weftComm_t comm, const char* fn, Call call, weftStream_t stream,
                    weftRequest_t* request) {
  clearError();
  CommCall guard(comm, fn);
  WEFT_CHECK(guard.status());
  if (request != nullptr) *request = nullptr;
  WEFT_CHECK(validateCall(comm, fn, &call, stream));
  call.seq = ++comm->seq;  // 1-based: the first call is #1
  call.turn = takeCallerTurn(comm);
  call.stream = stream;
  if (inGroup()) {
    if (call.anySource != nullptr)
      return setError(weftInvalidUsage,
                      "%s: a receive from any source cannot be in a group (its peer is known "
                      "only when it runs)",
                      fn);
    if (request != nullptr)
      return setError(weftInvalidUsage,
                      "%s: non-blocking calls cannot be made inside a group; use weftGroupEndAsync",
                      fn);
    WEFT_CHECK(recordInGroup(comm, fn, call));
    return weftSuccess;
  }
  // A blocking host call with nothing queued runs here, without a copy of it.
  if (stream == nullptr && request == nullptr && comm->progress.idle())
    return executeCalls(comm, &call, 1);
  std::vector<Call> calls{call};
  // On a stream: enqueued there, and its collective queued behind the others.
  if (stream != nullptr) return enqueueOnStream(comm, fn, calls, stream);
  auto* req = new weftRequest();
  req->work = [comm, calls] { return executeCalls(comm, calls); };
  comm->progress.submit(req);
  if (request != nullptr) {
    *request = handOutRequest(req);
    return weftSuccess;
  }
  ProgressThread::waitFor(req);
  return ProgressThread::finish(req);
}

Call make(CollKind kind, const void* s, void* r, size_t n, weftDataType_t dt,
          weftRedOp_t op = weftSum, int root = 0, int peer = -1) {
  return makeCall(kind, s, r, n, dt, op, root, peer);
}

weftResult_t needRequest(weftRequest_t* request, const char* fn) {
  if (request == nullptr) return setError(weftInvalidArgument, "%s: request is NULL", fn);
  return weftSuccess;
}

}  // namespace

#define WEFT_ASYNC(fn, call)                         \
  do {                                               \
    WEFT_CHECK(needRequest(request, fn));            \
    return submit(comm, fn, call, nullptr, request); \
  } while (0)

extern "C" {

weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                           weftStream_t stream) {
  return submit(comm, "weftAllReduce",
                make(CollKind::kAllReduce, sendbuff, recvbuff, count, datatype, op), stream,
                nullptr);
}

weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftAllGather",
                make(CollKind::kAllGather, sendbuff, recvbuff, sendcount, datatype), stream,
                nullptr);
}

weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                               weftStream_t stream) {
  return submit(comm, "weftReduceScatter",
                make(CollKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op), stream,
                nullptr);
}

weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, int root, weftComm_t comm,
                           weftStream_t stream) {
  return submit(comm, "weftBroadcast",
                make(CollKind::kBroadcast, sendbuff, recvbuff, count, datatype, weftSum, root),
                stream, nullptr);
}

weftResult_t weftBcast(void* buff, size_t count, weftDataType_t datatype, int root, weftComm_t comm,
                       weftStream_t stream) {
  return submit(comm, "weftBcast",
                make(CollKind::kBroadcast, buff, buff, count, datatype, weftSum, root), stream,
                nullptr);
}

weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                        weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftReduce",
                make(CollKind::kReduce, sendbuff, recvbuff, count, datatype, op, root), stream,
                nullptr);
}

weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftAllToAll",
                make(CollKind::kAllToAll, sendbuff, recvbuff, count, datatype), stream, nullptr);
}

weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftSend",
                make(CollKind::kSend, sendbuff, nullptr, count, datatype, weftSum, 0, peer), stream,
                nullptr);
}

weftResult_t weftRecvAny(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                         weftComm_t comm) {
  if (source == nullptr) return setError(weftInvalidArgument, "weftRecvAny: source is NULL");
  Call c = make(CollKind::kRecv, nullptr, recvbuff, count, datatype, weftSum, 0, -1);
  c.anySource = source;
  return submit(comm, "weftRecvAny", c, nullptr, nullptr);
}

weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftRecv",
                make(CollKind::kRecv, nullptr, recvbuff, count, datatype, weftSum, 0, peer), stream,
                nullptr);
}

weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftBarrier", make(CollKind::kBarrier, nullptr, nullptr, 0, weftUint8),
                stream, nullptr);
}

weftResult_t weftAllReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                                weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                weftRequest_t* request) {
  WEFT_ASYNC("weftAllReduceAsync",
             make(CollKind::kAllReduce, sendbuff, recvbuff, count, datatype, op));
}

weftResult_t weftAllGatherAsync(const void* sendbuff, void* recvbuff, size_t sendcount,
                                weftDataType_t datatype, weftComm_t comm, weftRequest_t* request) {
  WEFT_ASYNC("weftAllGatherAsync",
             make(CollKind::kAllGather, sendbuff, recvbuff, sendcount, datatype));
}

weftResult_t weftReduceScatterAsync(const void* sendbuff, void* recvbuff, size_t recvcount,
                                    weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                    weftRequest_t* request) {
  WEFT_ASYNC("weftReduceScatterAsync",
             make(CollKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op));
}

weftResult_t weftBroadcastAsync(const void* sendbuff, void* recvbuff, size_t count,
                                weftDataType_t datatype, int root, weftComm_t comm,
                                weftRequest_t* request) {
  WEFT_ASYNC("weftBroadcastAsync",
             make(CollKind::kBroadcast, sendbuff, recvbuff, count, datatype, weftSum, root));
}

weftResult_t weftReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                             weftDataType_t datatype, weftRedOp_t op, int root, weftComm_t comm,
                             weftRequest_t* request) {
  WEFT_ASYNC("weftReduceAsync",
             make(CollKind::kReduce, sendbuff, recvbuff, count, datatype, op, root));
}

weftResult_t weftAllToAllAsync(const void* sendbuff, void* recvbuff, size_t count,
                               weftDataType_t datatype, weftComm_t comm, weftRequest_t* request) {
  WEFT_ASYNC("weftAllToAllAsync", make(CollKind::kAllToAll, sendbuff, recvbuff, count, datatype));
}

weftResult_t weftRecvAnyAsync(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                              weftComm_t comm, weftRequest_t* request) {
  WEFT_CHECK(needRequest(request, "weftRecvAnyAsync"));
  if (source == nullptr) return setError(weftInvalidArgument, "weftRecvAnyAsync: source is NULL");
  Call c = make(CollKind::kRecv, nullptr, recvbuff, count, datatype, weftSum, 0, -1);
  c.anySource = source;
  return submit(comm, "weftRecvAnyAsync", c, nullptr, request);
}

weftResult_t weftSendAsync(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                           weftComm_t comm, weftRequest_t* request) {
  WEFT_ASYNC("weftSendAsync",
             make(CollKind::kSend, sendbuff, nullptr, count, datatype, weftSum, 0, peer));
}

weftResult_t weftRecvAsync(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                           weftComm_t comm, weftRequest_t* request) {
  WEFT_ASYNC("weftRecvAsync",
             make(CollKind::kRecv, nullptr, recvbuff, count, datatype, weftSum, 0, peer));
}

weftResult_t weftBarrierAsync(weftComm_t comm, weftRequest_t* request) {
  WEFT_ASYNC("weftBarrierAsync", make(CollKind::kBarrier, nullptr, nullptr, 0, weftUint8));
}

weftResult_t weftTest(weftRequest_t* request, int* done) {
  clearError();
  if (request == nullptr || *request == nullptr)
    return setError(weftInvalidArgument, "weftTest: request is NULL (already completed?)");
  if (done == nullptr) return setError(weftInvalidArgument, "weftTest: done is NULL");
  *done = 0;
  weftRequest* req = *request;
  switch (testRequestHandle(req)) {
    case HandleState::kUnknown:
      return setError(weftInvalidArgument, "weftTest: %s", kNotOutstanding);
    case HandleState::kRunning:
      return weftSuccess;
    case HandleState::kTaken:
      break;
  }
  *done = 1;
  *request = nullptr;
  return ProgressThread::finish(req);
}

weftResult_t weftWait(weftRequest_t* request) {
  clearError();
  if (request == nullptr || *request == nullptr)
    return setError(weftInvalidArgument, "weftWait: request is NULL (already completed?)");
  weftRequest* req = *request;
  if (!takeRequestHandle(req))
    return setError(weftInvalidArgument, "weftWait: %s", kNotOutstanding);
  *request = nullptr;
  ProgressThread::waitFor(req);
  return ProgressThread::finish(req);
}

}  // extern "C"
