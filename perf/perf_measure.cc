// Timing, checking and cross-rank combination for the perf tools (see
// perf_measure.h).
#include "perf_measure.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "perf_check.h"
#include "perf_datatype.h"
#include "perf_device.h"
#include "perf_error.h"

namespace {

// Sentinel written over receive buffers before a check; never a check value.
constexpr int64_t kSentinel = -1;

void CallOnce(const PerfCase& shape, const PerfCall& call) {
  const PerfCollective& collective = *shape.collective;
  if (shape.nonblocking) {
    weftRequest_t request = nullptr;
    PERF_WEFT_CHECK(shape.comm, collective.start(call, &request));
    PERF_WEFT_CHECK(shape.comm, weftWait(&request));
  } else {
    PERF_WEFT_CHECK(shape.comm, collective.run(call));
  }
}

// One timed iteration: agg_iters calls, in one group when there are several
// (nccl-tests' -m), so that the library may run them as one.
void Iteration(const PerfCase& shape, const PerfCall& call) {
  if (shape.agg_iters == 1) return CallOnce(shape, call);
  PERF_WEFT_CHECK(shape.comm, weftGroupStart());
  for (int i = 0; i < shape.agg_iters; ++i) CallOnce(shape, call);
  PERF_WEFT_CHECK(shape.comm, weftGroupEnd());
}

void Synchronise(weftComm_t comm) {
  float mine = 1.0f;
  float sum = 0.0f;
  PERF_WEFT_CHECK(comm,
                  weftAllReduce(&mine, &sum, 1, weftFloat32, weftSum, comm, WEFT_STREAM_HOST));
}

}  // namespace

PerfCall PerfMakeCall(const PerfCase& shape, bool in_place) {
  const PerfCollective& collective = *shape.collective;
  PerfCall call;
  call.send = shape.send;
  call.recv = shape.recv;
  if (in_place) {
    char* base = static_cast<char*>(shape.recv);
    const size_t elem_size = PerfTypeOf(shape.type).size;
    call.send = base + collective.inplace_send_offset(shape.count, shape.rank) * elem_size;
    call.recv = base + collective.inplace_recv_offset(shape.count, shape.rank) * elem_size;
  }
  call.count = shape.count;
  call.type = shape.type;
  call.op = shape.op;
  call.root = shape.root;
  call.rank = shape.rank;
  call.nranks = shape.nranks;
  call.comm = shape.comm;
  call.stream = shape.stream;
  return call;
}

size_t PerfRecvAllocationElems(const PerfCollective& collective, size_t count, int rank,
                               int nranks) {
  size_t elems = collective.recv_elems(count, nranks);
  if (collective.has_in_place) {
    elems = std::max(
        elems, collective.inplace_send_offset(count, rank) + collective.send_elems(count, nranks));
    elems = std::max(
        elems, collective.inplace_recv_offset(count, rank) + collective.recv_elems(count, nranks));
  }
  return elems;
}

double PerfTimeOnRank(const PerfCase& shape, bool in_place, int warmup, int iters) {
  const PerfCall call = PerfMakeCall(shape, in_place);
  if (shape.stream == nullptr) {  // host buffers: time on data, not on shared pages
    const PerfCollective& collective = *shape.collective;
    PerfFillTiming(shape.recv,
                   PerfRecvAllocationElems(collective, shape.count, shape.rank, shape.nranks),
                   shape.type, shape.rank);
    if (!in_place)
      PerfFillTiming(shape.send, collective.send_elems(shape.count, shape.nranks), shape.type,
                     shape.rank + shape.nranks);
  }
  for (int i = 0; i < warmup; ++i) Iteration(shape, call);
  if (shape.stream != nullptr) PerfDeviceSync(shape.stream);
  Synchronise(shape.comm);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) Iteration(shape, call);
  if (shape.stream != nullptr) PerfDeviceSync(shape.stream);  // calls on a stream return at once
  const auto stop = std::chrono::steady_clock::now();
  const std::chrono::duration<double, std::micro> elapsed = stop - start;
  return elapsed.count() / (static_cast<double>(iters) * shape.agg_iters);
}

namespace {

// The check of PerfCheckOnRank on device buffers: host mirrors laid out as the
// device allocations are, filled as the host check fills its buffers, copied
// up, the call made on the stream, the receive allocation copied back.
int64_t CheckOnDevice(const PerfCase& shape, bool in_place) {
  const PerfCollective& collective = *shape.collective;
  const size_t elem_size = PerfTypeOf(shape.type).size;
  const size_t recv_bytes =
      PerfRecvAllocationElems(collective, shape.count, shape.rank, shape.nranks) * elem_size;
  const size_t send_bytes = collective.send_elems(shape.count, shape.nranks) * elem_size;
  std::vector<char> host_send(send_bytes + 1), host_recv(recv_bytes + 1);
  PerfCase host = shape;
  host.send = host_send.data();
  host.recv = host_recv.data();
  const PerfCall host_call = PerfMakeCall(host, in_place);
  PerfFillConstant(host_call.recv, collective.recv_elems(shape.count, shape.nranks), shape.type,
                   kSentinel);
  PerfFillInput(const_cast<void*>(host_call.send), collective.send_elems(shape.count, shape.nranks),
                shape.type, shape.op, shape.rank);
  PerfCopyToDevice(shape.recv, host_recv.data(), recv_bytes);
  if (!in_place) PerfCopyToDevice(shape.send, host_send.data(), send_bytes);
  CallOnce(shape, PerfMakeCall(shape, in_place));
  PerfDeviceSync(shape.stream);
  PerfCopyToHost(host_recv.data(), shape.recv, recv_bytes);
  if (collective.result_on_root_only && shape.rank != shape.root) return 0;
  return PerfCountWrong(collective, host_call);
}

}  // namespace

int64_t PerfCheckOnRank(const PerfCase& shape, bool in_place) {
  if (shape.stream != nullptr) return CheckOnDevice(shape, in_place);
  const PerfCollective& collective = *shape.collective;
  const PerfCall call = PerfMakeCall(shape, in_place);
  // Sentinel first: in place, the input then overwrites the part it shares.
  PerfFillConstant(call.recv, collective.recv_elems(shape.count, shape.nranks), shape.type,
                   kSentinel);
  // The harness owns the send buffer; PerfCall holds it const as the API does.
  PerfFillInput(const_cast<void*>(call.send), collective.send_elems(shape.count, shape.nranks),
                shape.type, shape.op, shape.rank);
  CallOnce(shape, call);
  if (collective.result_on_root_only && shape.rank != shape.root) return 0;
  return PerfCountWrong(collective, call);
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
