// Timing, checking and cross-rank combination for the perf tools (see
// perf_measure.h).
#include "perf_measure.h"

#include <chrono>

#include "perf_check.h"
#include "perf_datatype.h"
#include "perf_error.h"

namespace {

// Sentinel written over receive buffers before a check; never a check value.
constexpr int64_t kSentinel = -1;

void* SendPointer(const PerfCase& shape, bool in_place) {
  if (!in_place) return shape.send;
  const size_t offset = shape.collective->inplace_send_offset(shape.count, shape.rank);
  return static_cast<char*>(shape.recv) + offset * PerfTypeOf(shape.type).size;
}

void CallOnce(const PerfCase& shape, const void* send) {
  const PerfCollective& collective = *shape.collective;
  if (shape.nonblocking) {
    weftRequest_t request = nullptr;
    PERF_WEFT_CHECK(shape.comm, collective.start(send, shape.recv, shape.count, shape.type,
                                                 shape.op, shape.comm, &request));
    PERF_WEFT_CHECK(shape.comm, weftWait(&request));
  } else {
    PERF_WEFT_CHECK(shape.comm, collective.run(send, shape.recv, shape.count, shape.type, shape.op,
                                               shape.comm));
  }
}

void Synchronise(weftComm_t comm) {
  float mine = 1.0f;
  float sum = 0.0f;
  PERF_WEFT_CHECK(comm,
                  weftAllReduce(&mine, &sum, 1, weftFloat32, weftSum, comm, WEFT_STREAM_HOST));
}

}  // namespace

double PerfTimeOnRank(const PerfCase& shape, bool in_place, int warmup, int iters) {
  const void* send = SendPointer(shape, in_place);
  for (int i = 0; i < warmup; ++i) CallOnce(shape, send);
  Synchronise(shape.comm);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) CallOnce(shape, send);
  const auto stop = std::chrono::steady_clock::now();
  const std::chrono::duration<double, std::micro> elapsed = stop - start;
  return elapsed.count() / iters;
}

int64_t PerfCheckOnRank(const PerfCase& shape, bool in_place) {
  const PerfCollective& collective = *shape.collective;
  const size_t recv_elems = collective.recv_elems(shape.count, shape.nranks);
  PerfFillConstant(shape.recv, recv_elems, shape.type, kSentinel);
  void* send = SendPointer(shape, in_place);
  PerfFillInput(send, shape.count, shape.type, shape.op, shape.rank);
  CallOnce(shape, send);
  return PerfCountWrong(shape.recv, shape.type, collective, shape.count, shape.op, shape.nranks);
}

void PerfCombineTimes(const PerfCase& shape, PerfAverage average, double times_us[2]) {
  double mine[2] = {times_us[0], times_us[1]};
  weftRedOp_t op = weftSum;
  if (average == PerfAverage::kMin) op = weftMin;
  if (average == PerfAverage::kMax) op = weftMax;
  if (average == PerfAverage::kRank0 && shape.rank != 0) mine[0] = mine[1] = 0.0;
  PERF_WEFT_CHECK(shape.comm,
                  weftAllReduce(mine, times_us, 2, weftFloat64, op, shape.comm, WEFT_STREAM_HOST));
  if (average == PerfAverage::kMean) {
    times_us[0] /= shape.nranks;
    times_us[1] /= shape.nranks;
  }
}

void PerfSumOverRanks(const PerfCase& shape, int64_t values[2]) {
  int64_t mine[2] = {values[0], values[1]};
  PERF_WEFT_CHECK(shape.comm,
                  weftAllReduce(mine, values, 2, weftInt64, weftSum, shape.comm, WEFT_STREAM_HOST));
}
