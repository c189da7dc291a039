// all_reduce_perf: nccl-tests-style benchmark of weftAllReduce. Describes the
// collective to the shared perf harness (perf_collective.h).
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfReducedValue(call.op, call.nranks, index);
}

weftResult_t Run(const PerfCall& c) {
  return weftAllReduce(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftAllReduceAsync(c.send, c.recv, c.count, c.type, c.op, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "all_reduce_perf";
  collective.takes_op = true;
  collective.busbw_factor = PerfBusBwAllReduce;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
