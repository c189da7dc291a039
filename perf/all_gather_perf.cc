// all_gather_perf: nccl-tests-style benchmark of weftAllGather. Describes the
// collective to the shared perf harness (perf_collective.h). As in nccl-tests,
// the size is the whole gathered buffer; each rank sends size/nranks.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfInputValue(call.op, static_cast<int>(index / call.count), index % call.count);
}

weftResult_t Run(const PerfCall& c) {
  return weftAllGather(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftAllGatherAsync(c.send, c.recv, c.count, c.type, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "all_gather_perf";
  collective.busbw_factor = PerfBusBwRing;
  collective.count_for_bytes = PerfCountPerRank;
  collective.bytes_for_count = PerfBytesAllRanks;
  collective.recv_elems = PerfElemsAllRanks;
  collective.inplace_send_offset = PerfOffsetRankBlock;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
