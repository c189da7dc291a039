// all_gather_perf: nccl-tests-style benchmark of weftAllGather. Describes the
// collective to the shared perf harness (perf_collective.h). As in nccl-tests,
// the size is the whole gathered buffer; each rank sends size/nranks.
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

size_t SendElems(size_t count, int /*nranks*/) { return count; }

size_t RecvElems(size_t count, int nranks) { return count * static_cast<size_t>(nranks); }

size_t InPlaceSendOffset(size_t count, int rank) { return count * static_cast<size_t>(rank); }

size_t InPlaceRecvOffset(size_t /*count*/, int /*rank*/) { return 0; }

int64_t Expected(size_t index, const PerfCall& call) {
  return PerfInputValue(call.op, static_cast<int>(index / call.count), index % call.count);
}

weftResult_t Run(const PerfCall& c) {
  return weftAllGather(c.send, c.recv, c.count, c.type, c.comm, WEFT_STREAM_HOST);
}

weftResult_t Start(const PerfCall& c, weftRequest_t* request) {
  return weftAllGatherAsync(c.send, c.recv, c.count, c.type, c.comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "all_gather_perf";
  collective.takes_op = false;
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
