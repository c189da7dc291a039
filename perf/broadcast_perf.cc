// broadcast_perf: nccl-tests-style benchmark of broadcast from root -r. Out of
// place it calls weftBroadcast; in place it calls weftBcast (the legacy
// in-place form), or weftBroadcastAsync with one buffer under -z 1. Every rank
// fills its input with its own check values, so only the root's reach the
// receive buffers. busbw = algbw.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"
#include "perf_shapes.h"

namespace {

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfInputValue(call.op, call.root, index);
}

weftResult_t Run(const PerfCall& c) {
  if (c.send == c.recv) return weftBcast(c.recv, c.count, c.type, c.root, c.comm, c.stream);
  return weftBroadcast(c.send, c.recv, c.count, c.type, c.root, c.comm, c.stream);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftBroadcastAsync(c.send, c.recv, c.count, c.type, c.root, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "broadcast_perf";
  collective.takes_root = true;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
