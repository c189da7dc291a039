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

size_t InPlaceOffset(size_t count, int rank) { return count * static_cast<size_t>(rank); }

int64_t Expected(size_t index, size_t count, weftRedOp_t op, int /*nranks*/) {
  return PerfInputValue(op, static_cast<int>(index / count), index % count);
}

weftResult_t Run(const void* send, void* recv, size_t count, weftDataType_t type,
                 weftRedOp_t /*op*/, weftComm_t comm) {
  return weftAllGather(send, recv, count, type, comm, WEFT_STREAM_HOST);
}

weftResult_t Start(const void* send, void* recv, size_t count, weftDataType_t type,
                   weftRedOp_t /*op*/, weftComm_t comm, weftRequest_t* request) {
  return weftAllGatherAsync(send, recv, count, type, comm, request);
}

}  // namespace

int main(int argc, char** argv) {
  PerfCollective collective = {};
  collective.tool_name = "all_gather_perf";
  collective.takes_op = false;
  collective.busbw_factor = BusBwFactor;
  collective.count_for_bytes = CountForBytes;
  collective.bytes_for_count = BytesForCount;
  collective.send_elems = SendElems;
  collective.recv_elems = RecvElems;
  collective.inplace_send_offset = InPlaceOffset;
  collective.expected = Expected;
  collective.run = Run;
  collective.start = Start;
  return PerfMain(argc, argv, collective);
}
