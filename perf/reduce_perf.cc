// reduce_perf: nccl-tests-style benchmark of weftReduce to root -r. Only the
// root's receive buffer holds the result, so only the root checks it.
// busbw = algbw.
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
  return PerfReducedValue(call.op, call.nranks, index);
}

weftResult_t Run(const PerfCall& c) {
  return weftReduce(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, WEFT_STREAM_HOST);
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
  collective.has_in_place = true;
  collective.result_on_root_only = true;
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
