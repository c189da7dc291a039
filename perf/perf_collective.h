// What a perf tool tells the shared harness about its collective: how sizes map
// to counts and buffers, its bus-bandwidth factor, the expected result of the
// check inputs, and how to call it (blocking and non-blocking).
#ifndef WEFT_PERF_PERF_COLLECTIVE_H
#define WEFT_PERF_PERF_COLLECTIVE_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>

#include "perf_shapes.h"

// One call of the collective as this rank makes it.
struct PerfCall {
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // the collective's count argument
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  int root = 0;  // -r; used by rooted collectives only
  int rank = 0;
  int nranks = 1;
  weftComm_t comm = nullptr;
  void* stream = nullptr;  // -D 1: the cudaStream_t the call is enqueued on (else host)
};

// The defaults describe one buffer of `count` elements on every rank, in place
// at offset 0, busbw = algbw (broadcast's shape): a tool sets what differs.
struct PerfCollective {
  const char* tool_name = nullptr;  // "all_reduce_perf"
  bool takes_op = false;            // false: the redop column shows "none" and -o is ignored
  bool takes_root = false;          // true: -r picks the root and the root column shows it
  // false: the API forbids in-place calls (alltoall) or leaves them undefined
  // (sendrecv); the in-place columns then show N/A.
  bool has_in_place = true;
  // true: only the root's receive buffer holds a result, so only it is checked.
  bool result_on_root_only = false;
  // busbw = algbw * busbw_factor(nranks).
  double (*busbw_factor)(int nranks) = PerfBusBwOne;
  // The collective's count argument for a requested size in bytes (at least 1).
  size_t (*count_for_bytes)(size_t bytes, size_t elem_size, int nranks) = PerfCountOfBuffer;
  // The "size" column for a count: bytes of the buffer nccl-tests reports.
  size_t (*bytes_for_count)(size_t count, size_t elem_size, int nranks) = PerfBytesOfBuffer;
  // Elements in the send and receive buffers for a count.
  size_t (*send_elems)(size_t count, int nranks) = PerfElemsCount;
  size_t (*recv_elems)(size_t count, int nranks) = PerfElemsCount;
  // In place, both buffers lie in one allocation: the send buffer starts this
  // many elements into it, and so does the receive buffer.
  size_t (*inplace_send_offset)(size_t count, int rank) = PerfOffsetZero;
  size_t (*inplace_recv_offset)(size_t count, int rank) = PerfOffsetZero;
  // Expected value of receive element `index` of this call when every rank r
  // filled its send buffer with PerfInputValue(call.op, r, i) (perf_check.h).
  int64_t (*expected)(size_t index, const PerfCall& call) = nullptr;
  weftResult_t (*run)(const PerfCall& call) = nullptr;
  weftResult_t (*start)(const PerfCall& call, weftRequest_t* request) = nullptr;
};

// Runs the whole tool: options, launch, sizes x types x ops, report. Returns
// the process exit status (0 ok, 1 wrong results or errors, 2 usage).
int PerfMain(int argc, char** argv, const PerfCollective& collective);

#endif  // WEFT_PERF_PERF_COLLECTIVE_H
