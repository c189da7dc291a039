// sendrecv_perf: nccl-tests-style benchmark of point to point: every rank
// sends `count` elements to rank+1 and receives as many from rank-1, both in
// one weftGroupStart/weftGroupEnd (weftGroupEndAsync under -z 1). busbw =
// algbw. Sending and receiving one buffer at once is not defined by weft.h,
// so the in-place columns show N/A.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

int NextRank(const PerfCall& c) { return (c.rank + 1) % c.nranks; }
int PreviousRank(const PerfCall& c) { return (c.rank + c.nranks - 1) % c.nranks; }

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfInputValue(call.op, PreviousRank(call), index);
}

// Records the send and the receive in the open group; the first failure wins.
weftResult_t Post(const PerfCall& c) {
  weftResult_t result = weftSend(c.send, c.count, c.type, NextRank(c), c.comm, c.stream);
  if (result != weftSuccess) return result;
  return weftRecv(c.recv, c.count, c.type, PreviousRank(c), c.comm, c.stream);
}

weftResult_t Run(const PerfCall& c) {
  weftResult_t result = weftGroupStart();
  if (result != weftSuccess) return result;
  const weftResult_t posted = Post(c);
  result = weftGroupEnd();  // always close the group, even after a failure
  return posted != weftSuccess ? posted : result;
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  weftResult_t result = weftGroupStart();
  if (result != weftSuccess) return result;
  const weftResult_t posted = Post(c);
  result = weftGroupEndAsync(request);
  return posted != weftSuccess ? posted : result;
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "sendrecv_perf";
  collective.has_in_place = false;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
