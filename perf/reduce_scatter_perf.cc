// reduce_scatter_perf: nccl-tests-style benchmark of weftReduceScatter. As in
// nccl-tests, the size is the whole input buffer (nranks blocks of recvcount);
// busbw = algbw * (n-1)/n. In place, each rank's input starts at the same
// address as the buffer and its result lands at block `rank` of it.
#include <algorithm>

#include "perf_check.h"
#include "perf_collective.h"

namespace {

double BusBwFactor(int nranks) { return 1.0 * (nranks - 1) / nranks; }

size_t CountForBytes(size_t bytes, size_t elem_size, int nranks) {
  return std::max<size_t>(1, bytes / elem_size / static_cast<size_t>(nranks));
}

size_t BytesForCount(size_t count, size_t elem_size, int nranks) {
  return count * elem_size * static_cast<size_t>(nranks);
}

size_t SendElems(size_t count, int nranks) { return count * static_cast<size_t>(nranks); }

size_t RecvElems(size_t count, int /*nranks*/) { return count; }

size_t InPlaceSendOffset(size_t /*count*/, int /*rank*/) { return 0; }

size_t InPlaceRecvOffset(size_t count, int rank) { return count * static_cast<size_t>(rank); }

// Block `rank` of the reduction of every rank's whole input.
int64_t Expected(size_t index, const PerfCall& call) {
  return PerfReducedValue(call.op, call.nranks,
                          static_cast<size_t>(call.rank) * call.count + index);
}

weftResult_t Run(const PerfCall& c) {
  return weftReduceScatter(c.send, c.recv, c.count, c.type, c.op, c.comm, WEFT_STREAM_HOST);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftReduceScatterAsync(c.send, c.recv, c.count, c.type, c.op, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "reduce_scatter_perf";
  collective.takes_op = true;
  collective.takes_root = false;
  collective.has_in_place = true;
  collective.result_on_root_only = false;
  collective.busbw_factor = BusBwFactor;
  collective.count_for_bytes = CountForBytes;
  collective.bytes_for_count = BytesForCount;
  collective.send_elems = SendElems;
  collective.recv_elems = RecvElems;
  collective.inplace_send_offset = InPlaceSendOffset;
  collective.inplace_recv_offset = InPlaceRecvOffset;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
