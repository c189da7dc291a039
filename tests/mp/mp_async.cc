// The non-blocking forms across processes: three requests in flight at once
// (allreduce, allgather, in-place allreduce), completed by weftWait in call
// order, then by a weftTest loop that polls the newest request first (so it
// would notice a later request finishing before an earlier one), then a
// blocking call issued while a request is still queued.
#include <string>
#include <vector>

#include "mp_common.h"
#include "mp_inputs.h"

namespace mp {
namespace {

template <typename T>
std::vector<T> gatherReference(int nranks, size_t count) {
  std::vector<T> out(count * static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r)
    for (size_t i = 0; i < count; ++i)
      out[static_cast<size_t>(r) * count + i] = gatherInput<T>(r, i);
  return out;
}

template <typename T>
std::vector<T> reduceInputs(weftRedOp_t op, int rank, size_t count) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = reduceInput<T>(op, rank, i);
  return v;
}

template <typename T>
std::vector<T> gatherInputs(int rank, size_t count) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = gatherInput<T>(rank, i);
  return v;
}

// Completes whatever is still outstanding (after a failure) before buffers go away.
void drain(weftRequest_t* req, int n) {
  for (int k = 0; k < n; ++k)
    if (req[k] != nullptr) weftWait(&req[k]);
}

bool started(Log& log, const Job& job, const char* what, weftResult_t r) {
  if (r == weftSuccess) return true;
  log.fail(std::string(what) + ": starting a request returned " + weftGetErrorString(r) + ": " +
           weftGetLastError(job.comm));
  return false;
}

// Three requests completed with weftWait in call order.
bool waitInOrder(const Job& job, Log& log) {
  const size_t a = job.largeCount / 10 | 1, b = 5003, c = 7;
  std::vector<float> inA = reduceInputs<float>(weftSum, job.rank, a), outA(a, -1.0f);
  std::vector<int32_t> inB = gatherInputs<int32_t>(job.rank, b), outB(b * job.nranks, -1);
  std::vector<double> ioC = reduceInputs<double>(weftMax, job.rank, c);
  weftRequest_t req[3] = {nullptr, nullptr, nullptr};
  weftResult_t r =
      weftAllReduceAsync(inA.data(), outA.data(), a, weftFloat, weftSum, job.comm, &req[0]);
  if (r == weftSuccess)
    r = weftAllGatherAsync(inB.data(), outB.data(), b, weftInt32, job.comm, &req[1]);
  if (r == weftSuccess)
    r = weftAllReduceAsync(ioC.data(), ioC.data(), c, weftDouble, weftMax, job.comm, &req[2]);
  if (!started(log, job, "async wait", r)) {
    drain(req, 3);
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    r = weftWait(&req[k]);
    if (r != weftSuccess || req[k] != nullptr) {
      log.fail("async wait: request " + std::to_string(k) + " returned " + weftGetErrorString(r) +
               ": " + weftGetLastError(job.comm));
      drain(req, 3);
      return false;
    }
  }
  bool ok = true;
  if (outA != reduceReference<float>(weftSum, job.nranks, a)) {
    log.fail("async wait: allreduce float sum result is wrong");
    ok = false;
  }
  if (outB != gatherReference<int32_t>(job.nranks, b)) {
    log.fail("async wait: allgather int32 result is wrong");
    ok = false;
  }
  if (ioC != reduceReference<double>(weftMax, job.nranks, c)) {
    log.fail("async wait: in-place allreduce double max result is wrong");
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

// Three requests completed by a weftTest loop that polls the newest first.
bool testLoop(const Job& job, Log& log) {
  const size_t a = job.largeCount, b = 1, c = job.largeCount / 10 | 1;
  std::vector<int64_t> inA = reduceInputs<int64_t>(weftMin, job.rank, a), outA(a, -1);
  std::vector<float> inB = gatherInputs<float>(job.rank, b), outB(b * job.nranks, -1.0f);
  std::vector<float> ioC = reduceInputs<float>(weftAvg, job.rank, c);
  weftRequest_t req[3] = {nullptr, nullptr, nullptr};
  weftResult_t r =
      weftAllReduceAsync(inA.data(), outA.data(), a, weftInt64, weftMin, job.comm, &req[0]);
  if (r == weftSuccess)
    r = weftAllGatherAsync(inB.data(), outB.data(), b, weftFloat, job.comm, &req[1]);
  if (r == weftSuccess)
    r = weftAllReduceAsync(ioC.data(), ioC.data(), c, weftFloat, weftAvg, job.comm, &req[2]);
  if (!started(log, job, "async test", r)) {
    drain(req, 3);
    return false;
  }
  bool ok = true;
  int pending = 3;
  while (pending > 0) {
    for (int k = 2; k >= 0; --k) {
      if (req[k] == nullptr) continue;
      int done = 0;
      r = weftTest(&req[k], &done);
      if (r != weftSuccess) {
        log.fail("async test: request " + std::to_string(k) + " returned " + weftGetErrorString(r) +
                 ": " + weftGetLastError(job.comm));
        drain(req, 3);
        return false;
      }
      if (!done) continue;
      --pending;
      for (int earlier = 0; earlier < k; ++earlier) {
        if (req[earlier] == nullptr) continue;
        int earlierDone = 0;
        r = weftTest(&req[earlier], &earlierDone);
        if (r == weftSuccess && !earlierDone) {
          log.fail("async test: request " + std::to_string(k) + " completed before request " +
                   std::to_string(earlier));
          ok = false;
          r = weftWait(&req[earlier]);
        }
        --pending;
        if (r != weftSuccess) {
          log.fail("async test: request " + std::to_string(earlier) + " returned " +
                   weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
          drain(req, 3);
          return false;
        }
      }
    }
  }
  if (outA != reduceReference<int64_t>(weftMin, job.nranks, a)) {
    log.fail("async test: allreduce int64 min result is wrong");
    ok = false;
  }
  if (outB != gatherReference<float>(job.nranks, b)) {
    log.fail("async test: allgather float result is wrong");
    ok = false;
  }
  if (ioC != reduceReference<float>(weftAvg, job.nranks, c)) {
    log.fail("async test: in-place allreduce float avg result is wrong");
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

// A blocking call made while a request is queued runs after it (call order).
void blockingBehindAsync(const Job& job, Log& log) {
  const size_t a = job.largeCount, b = 333;
  std::vector<int32_t> inA = reduceInputs<int32_t>(weftSum, job.rank, a), outA(a, -1);
  std::vector<double> inB = gatherInputs<double>(job.rank, b), outB(b * job.nranks, -1.0);
  weftRequest_t req = nullptr;
  weftResult_t ra =
      weftAllReduceAsync(inA.data(), outA.data(), a, weftInt32, weftSum, job.comm, &req);
  if (!started(log, job, "async then blocking", ra)) return;
  weftResult_t rb =
      weftAllGather(inB.data(), outB.data(), b, weftDouble, job.comm, WEFT_STREAM_HOST);
  ra = weftWait(&req);
  if (ra != weftSuccess || rb != weftSuccess) {
    log.fail(std::string("async then blocking: returned ") + weftGetErrorString(ra) + " / " +
             weftGetErrorString(rb) + ": " + weftGetLastError(job.comm));
    return;
  }
  bool ok = outA == reduceReference<int32_t>(weftSum, job.nranks, a) &&
            outB == gatherReference<double>(job.nranks, b);
  if (ok)
    log.pass();
  else
    log.fail("async then blocking: wrong result");
}

}  // namespace

void checkAsync(const Job& job, Log& log) {
  if (waitInOrder(job, log) && testLoop(job, log)) blockingBehindAsync(job, log);
}

}  // namespace mp
