// reduce_perf: nccl-tests-style benchmark of weftReduce to root -r. Only the
// root's receive buffer holds the result, so only the root checks it.
// busbw = algbw.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfReducedValue(call.op, call.nranks, index);
}

weftResult_t Run(const PerfCall& c) {
  return weftReduce(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftReduceAsync(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "reduce_perf";
  collective.takes_op = true;
  collective.takes_root = true;
  collective.result_on_root_only = true;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
