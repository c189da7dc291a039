// alltoall_perf: nccl-tests-style benchmark of weftAllToAll. As in nccl-tests,
// the size is the whole send buffer (nranks blocks of count); busbw = algbw *
// (n-1)/n. weftAllToAll has no in-place form, so those columns show N/A.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

// Block j of the receive buffer is block `rank` of rank j's send buffer.
int64_t Expected(size_t index, const PerfCall& call) {
  const size_t sender = index / call.count;
  const size_t at = static_cast<size_t>(call.rank) * call.count + index % call.count;
  return PerfInputValue(call.op, static_cast<int>(sender), at);
}

weftResult_t Run(const PerfCall& c) {
  return weftAllToAll(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftAllToAllAsync(c.send, c.recv, c.count, c.type, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "alltoall_perf";
  collective.has_in_place = false;
  collective.busbw_factor = PerfBusBwRing;
  collective.count_for_bytes = PerfCountPerRank;
  collective.bytes_for_count = PerfBytesAllRanks;
  collective.send_elems = PerfElemsAllRanks;
  collective.recv_elems = PerfElemsAllRanks;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
