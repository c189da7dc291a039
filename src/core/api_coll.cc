// Collective entry points of the C ABI: argument checks (each failure names the
// argument), algorithm choice, and the blocking / non-blocking forms.
#include <cstdint>
#include <cstdio>

#include "collectives/reduce.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/log.h"

using namespace weft;

namespace {

enum class CollKind { kAllReduce, kAllGather };

struct Call {
  CollKind kind;
  CollArgs args;
};

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && x < y + bn && y < x + an;
}

weftResult_t validate(weftComm* comm, const char* fn, const Call& call, weftStream_t stream) {
  const CollArgs& a = call.args;
  if (stream != nullptr)
    return setError(weftInvalidArgument, "%s: stream must be NULL (host buffers): this weft build has no CUDA", fn);
  size_t esize = datatypeSize(a.datatype);
  if (esize == 0)
    return setError(weftInvalidArgument, "%s: datatype=%d is not a weftDataType_t", fn, static_cast<int>(a.datatype));
  if (call.kind == CollKind::kAllReduce) {
    if (static_cast<int>(a.op) < 0 || a.op >= weftNumOps)
      return setError(weftInvalidArgument, "%s: op=%d is not a weftRedOp_t", fn, static_cast<int>(a.op));
    if (!datatypeReducible(a.datatype))
      return setError(weftInvalidArgument, "%s: datatype=%s cannot be reduced on host memory yet", fn,
                      datatypeName(a.datatype));
  }
  size_t parts = call.kind == CollKind::kAllGather ? static_cast<size_t>(comm->nranks) : 1;
  if (a.count > SIZE_MAX / esize / parts || a.count * esize * parts > (SIZE_MAX >> 1))
    return setError(weftInvalidArgument, "%s: count=%zu of %s overflows the byte size", fn, a.count,
                    datatypeName(a.datatype));
  if (a.count == 0) return weftSuccess;
  if (a.sendbuff == nullptr) return setError(weftInvalidArgument, "%s: sendbuff is NULL with count=%zu", fn, a.count);
  if (a.recvbuff == nullptr) return setError(weftInvalidArgument, "%s: recvbuff is NULL with count=%zu", fn, a.count);
  size_t bytes = a.count * esize;
  if (call.kind == CollKind::kAllReduce) {
    if (a.sendbuff != a.recvbuff && overlaps(a.sendbuff, bytes, a.recvbuff, bytes))
      return setError(weftInvalidArgument, "%s: sendbuff and recvbuff overlap without being equal (in-place)", fn);
  } else {
    const char* own = static_cast<const char*>(a.recvbuff) + comm->rank * bytes;
    if (a.sendbuff != own && overlaps(a.sendbuff, bytes, a.recvbuff, bytes * comm->nranks))
      return setError(weftInvalidArgument,
                      "%s: sendbuff overlaps recvbuff but is not recvbuff + rank*sendcount (in-place)", fn);
  }
  return weftSuccess;
}

// Runs one collective on the calling thread. Failures other than bad arguments
// break the communicator (its byte streams may be out of step now).
weftResult_t execute(weftComm* comm, const Call& call, uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(comm->failMu);
    if (comm->failure != weftSuccess)
      return setError(comm->failure, "communicator is broken by an earlier failure: %s",
                      comm->failureText.c_str());
  }
  const CollArgs& a = call.args;
  if (a.count == 0) return weftSuccess;
  size_t bytes = a.count * datatypeSize(a.datatype);
  char what[96];
  CollContext& ctx = comm->ctx;
  weftResult_t r;
  Algo algo = comm->config.algo;
  if (call.kind == CollKind::kAllReduce) {
    bool fitsOneshot = oneshotStagingBytes(comm->nranks, bytes) <= ctx.stagingBytes;
    bool oneshot = algo == Algo::kOneshot ? fitsOneshot
                                          : algo == Algo::kAuto && bytes <= comm->config.oneshotMax;
    snprintf(what, sizeof(what), "allreduce #%llu (%zu x %s, %s, %s)", static_cast<unsigned long long>(seq),
             a.count, datatypeName(a.datatype), redOpName(a.op), oneshot ? "oneshot" : "ring");
    ctx.run.what = what;
    r = oneshot ? oneshotAllReduce(ctx, a) : ringAllReduce(ctx, a);
  } else {
    bool direct = algo == Algo::kOneshot || (algo == Algo::kAuto && bytes <= comm->config.oneshotMax);
    snprintf(what, sizeof(what), "allgather #%llu (%zu x %s per rank, %s)", static_cast<unsigned long long>(seq),
             a.count, datatypeName(a.datatype), direct ? "direct" : "ring");
    ctx.run.what = what;
    r = direct ? directAllGather(ctx, a) : ringAllGather(ctx, a);
  }
  if (r != weftSuccess && r != weftInvalidArgument) {
    std::string text = "rank " + std::to_string(comm->rank) + ": " + lastError();
    comm->markBroken(r, text);
    return setErrorString(r, text);
  }
  return r;
}

weftResult_t submit(weftComm_t comm, const char* fn, const Call& call, weftStream_t stream,
                    weftRequest_t* request) {
  clearError();
  CommCall guard(comm, fn);
  WEFT_CHECK(guard.status());
  if (request != nullptr) *request = nullptr;
  WEFT_CHECK(validate(comm, fn, call, stream));
  uint64_t seq = comm->seq++;
  if (request == nullptr) {
    // Blocking: inline when nothing is queued, else behind the queue to keep call order.
    if (comm->progress.idle()) return execute(comm, call, seq);
    weftRequest req;
    req.work = [comm, call, seq] { return execute(comm, call, seq); };
    comm->progress.submit(&req);
    ProgressThread::waitFor(&req);
    std::lock_guard<std::mutex> lock(req.mu);
    return req.result == weftSuccess ? weftSuccess : setErrorString(req.result, req.error);
  }
  auto* req = new weftRequest();
  req->work = [comm, call, seq] { return execute(comm, call, seq); };
  comm->progress.submit(req);
  *request = req;
  return weftSuccess;
}

weftResult_t finish(weftRequest_t* request) {
  weftRequest* req = *request;
  weftResult_t r;
  std::string err;
  {
    // Taking the lock orders us after the progress thread's last touch of req.
    std::lock_guard<std::mutex> lock(req->mu);
    r = req->result;
    err = req->error;
  }
  delete req;
  *request = nullptr;
  return r == weftSuccess ? weftSuccess : setErrorString(r, err);
}

Call allReduceCall(const void* s, void* r, size_t n, weftDataType_t dt, weftRedOp_t op) {
  Call c{CollKind::kAllReduce, {}};
  c.args = {s, r, n, dt, op};
  return c;
}

Call allGatherCall(const void* s, void* r, size_t n, weftDataType_t dt) {
  Call c{CollKind::kAllGather, {}};
  c.args = {s, r, n, dt, weftSum};
  return c;
}

}  // namespace

extern "C" weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                      weftRedOp_t op, weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftAllReduce", allReduceCall(sendbuff, recvbuff, count, datatype, op), stream, nullptr);
}

extern "C" weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                      weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return submit(comm, "weftAllGather", allGatherCall(sendbuff, recvbuff, sendcount, datatype), stream, nullptr);
}

extern "C" weftResult_t weftAllReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                                           weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                           weftRequest_t* request) {
  if (request == nullptr) return setError(weftInvalidArgument, "weftAllReduceAsync: request is NULL");
  return submit(comm, "weftAllReduceAsync", allReduceCall(sendbuff, recvbuff, count, datatype, op), nullptr,
                request);
}

extern "C" weftResult_t weftAllGatherAsync(const void* sendbuff, void* recvbuff, size_t sendcount,
                                           weftDataType_t datatype, weftComm_t comm, weftRequest_t* request) {
  if (request == nullptr) return setError(weftInvalidArgument, "weftAllGatherAsync: request is NULL");
  return submit(comm, "weftAllGatherAsync", allGatherCall(sendbuff, recvbuff, sendcount, datatype), nullptr,
                request);
}

extern "C" weftResult_t weftTest(weftRequest_t* request, int* done) {
  clearError();
  if (request == nullptr || *request == nullptr)
    return setError(weftInvalidArgument, "weftTest: request is NULL (already completed?)");
  if (done == nullptr) return setError(weftInvalidArgument, "weftTest: done is NULL");
  *done = (*request)->done.load(std::memory_order_acquire) ? 1 : 0;
  if (!*done) return weftSuccess;
  return finish(request);
}

extern "C" weftResult_t weftWait(weftRequest_t* request) {
  clearError();
  if (request == nullptr || *request == nullptr)
    return setError(weftInvalidArgument, "weftWait: request is NULL (already completed?)");
  ProgressThread::waitFor(*request);
  return finish(request);
}
