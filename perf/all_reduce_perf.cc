// all_reduce_perf: nccl-tests-style benchmark of weftAllReduce. Describes the
// collective to the shared perf harness (perf_collective.h).
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"

namespace {

double BusBwFactor(int nranks) { return 2.0 * (nranks - 1) / nranks; }

size_t CountForBytes(size_t bytes, size_t elem_size, int /*nranks*/) {
  return std::max<size_t>(1, bytes / elem_size);
}

size_t BytesForCount(size_t count, size_t elem_size, int /*nranks*/) { return count * elem_size; }

size_t BufferElems(size_t count, int /*nranks*/) { return count; }

size_t InPlaceOffset(size_t /*count*/, int /*rank*/) { return 0; }

int64_t Expected(size_t index, size_t /*count*/, weftRedOp_t op, int nranks) {
  return PerfReducedValue(op, nranks, index);
}

weftResult_t Run(const void* send, void* recv, size_t count, weftDataType_t type, weftRedOp_t op,
                 weftComm_t comm) {
  return weftAllReduce(send, recv, count, type, op, comm, WEFT_STREAM_HOST);
}

weftResult_t Start(const void* send, void* recv, size_t count, weftDataType_t type, weftRedOp_t op,
                   weftComm_t comm, weftRequest_t* request) {
  return weftAllReduceAsync(send, recv, count, type, op, comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "all_reduce_perf";
  collective.takes_op = true;
  collective.busbw_factor = BusBwFactor;
  collective.count_for_bytes = CountForBytes;
  collective.bytes_for_count = BytesForCount;
  collective.send_elems = BufferElems;
  collective.recv_elems = BufferElems;
  collective.inplace_send_offset = InPlaceOffset;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
