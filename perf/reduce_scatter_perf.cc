// reduce_scatter_perf: nccl-tests-style benchmark of weftReduceScatter. As in
// nccl-tests, the size is the whole input buffer (nranks blocks of recvcount);
// busbw = algbw * (n-1)/n. In place, each rank's input starts at the same
// address as the buffer and its result lands at block `rank` of it.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

// Block `rank` of the reduction of every rank's whole input.
int64_t Expected(size_t index, const PerfCall& call) {
  return PerfReducedValue(call.op, call.nranks,
                          static_cast<size_t>(call.rank) * call.count + index);
}

weftResult_t Run(const PerfCall& c) {
  return weftReduceScatter(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftReduceScatterAsync(c.send, c.recv, c.count, c.type, c.op, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "reduce_scatter_perf";
  collective.takes_op = true;
  collective.busbw_factor = PerfBusBwRing;
  collective.count_for_bytes = PerfCountPerRank;
  collective.bytes_for_count = PerfBytesAllRanks;
  collective.send_elems = PerfElemsAllRanks;
  collective.inplace_recv_offset = PerfOffsetRankBlock;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
