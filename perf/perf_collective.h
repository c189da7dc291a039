// What a perf tool tells the shared harness about its collective: how sizes map
// to counts and buffers, its bus-bandwidth factor, the expected result of the
// check inputs, and how to call it (blocking and non-blocking).
#ifndef WEFT_PERF_PERF_COLLECTIVE_H
#define WEFT_PERF_PERF_COLLECTIVE_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>

struct PerfCollective {
  const char* tool_name;  // "all_reduce_perf"
  bool takes_op;          // false: the redop column shows "none" and -o is ignored
  // busbw = algbw * busbw_factor(nranks).
  double (*busbw_factor)(int nranks);
  // The collective's count argument for a requested size in bytes (at least 1).
  size_t (*count_for_bytes)(size_t bytes, size_t elem_size, int nranks);
  // The "size" column for a count: bytes of the buffer nccl-tests reports.
  size_t (*bytes_for_count)(size_t count, size_t elem_size, int nranks);
  // Elements in the send and receive buffers for a count.
  size_t (*send_elems)(size_t count, int nranks);
  size_t (*recv_elems)(size_t count, int nranks);
  // In place: the send buffer is recvbuff + this many elements.
  size_t (*inplace_send_offset)(size_t count, int rank);
  // Expected value of receive element `index` when every rank r filled its send
  // buffer with PerfInputValue(op, r, i) (see perf_check.h).
  int64_t (*expected)(size_t index, size_t count, weftRedOp_t op, int nranks);
  weftResult_t (*run)(const void* send, void* recv, size_t count, weftDataType_t type,
                      weftRedOp_t op, weftComm_t comm);
  weftResult_t (*start)(const void* send, void* recv, size_t count, weftDataType_t type,
                        weftRedOp_t op, weftComm_t comm, weftRequest_t* request);
};

// Runs the whole tool: options, launch, sizes x types x ops, report. Returns
// the process exit status (0 ok, 1 wrong results or errors, 2 usage).
int PerfMain(int argc, char** argv, const PerfCollective& collective);

#endif  // WEFT_PERF_PERF_COLLECTIVE_H
