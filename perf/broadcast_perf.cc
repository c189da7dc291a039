// broadcast_perf: nccl-tests-style benchmark of broadcast from root -r. Out of
// place it calls weftBroadcast; in place it calls weftBcast (the legacy
// in-place form), or weftBroadcastAsync with one buffer under -z 1. Every rank
// fills its input with its own check values, so only the root's reach the
// receive buffers. busbw = algbw.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"

namespace {

double BusBwFactor(int /*nranks*/) { return 1.0; }

size_t CountForBytes(size_t bytes, size_t elem_size, int /*nranks*/) {
  return std::max<size_t>(1, bytes / elem_size);
}

size_t BytesForCount(size_t count, size_t elem_size, int /*nranks*/) { return count * elem_size; }

size_t BufferElems(size_t count, int /*nranks*/) { return count; }

size_t InPlaceOffset(size_t /*count*/, int /*rank*/) { return 0; }

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfInputValue(call.op, call.root, index);
}

weftResult_t Run(const PerfCall& c) {
  if (c.send == c.recv) return weftBcast(c.recv, c.count, c.type, c.root, c.comm, WEFT_STREAM_HOST);
  return weftBroadcast(c.send, c.recv, c.count, c.type, c.root, c.comm, WEFT_STREAM_HOST);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftBroadcastAsync(c.send, c.recv, c.count, c.type, c.root, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "broadcast_perf";
  collective.takes_op = false;
  collective.takes_root = true;
  collective.has_in_place = true;
  collective.result_on_root_only = false;
  collective.busbw_factor = BusBwFactor;
  collective.count_for_bytes = CountForBytes;
  collective.bytes_for_count = BytesForCount;
  collective.send_elems = BufferElems;
  collective.recv_elems = BufferElems;
  collective.inplace_send_offset = InPlaceOffset;
  collective.inplace_recv_offset = InPlaceOffset;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
