// One collective or point-to-point call as the API received it: what is
// validated, recorded in a group, queued on the progress thread, and executed.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/coll_kind.h"
#include "base/device_runtime.h"
#include "collectives/coll_context.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

// The int a C caller passed as an enum: look at it before the enum is ever
// read as one (reading an out-of-range enum is undefined in C++).
template <typename E>
int rawEnum(const E& value) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int raw = 0;
  std::memcpy(&raw, &value, sizeof(raw));
  return raw;
}

// The scalar of a kOpPreMulSum call (base/datatype.h), one element of the
// call's datatype: `value`, or, for a weftScalarDevice op, read from `read`
// when the call runs (the stream path points it at a pinned copy the stream
// made in order, device/staging_plan.h).
struct PreMulScalar {
  const void* read = nullptr;
  unsigned char value[8] = {};
};

struct Call {
  CollKind kind = CollKind::kAllReduce;
  CollArgs args;             // count is per rank as the API defines it; args.root for rooted kinds
  int peer = -1;             // send / recv; -1 with anySource: weftRecvAny
  int* anySource = nullptr;  // weftRecvAny's output: the rank whose send was received
  uint64_t seq = 0;
  uint8_t turn = 0;               // the communicator's thread turn when it was issued (comm.h)
  weftStream_t stream = nullptr;  // the caller's cudaStream_t (device/stream_call.h), or host
  // What checkCallBuffers found for the buffers of buffersOf(call) on this
  // rank, in that order (device/staging_plan.h), so that a call on a stream
  // is classified once: the stream path plans its staging from these.
  PointerInfo buffers[2];
  bool classified = false;  // buffers[] is set (always, for a validated call on a stream)
  PreMulScalar premul;      // when args.op is kOpPreMulSum
};

// A call with these arguments (not yet validated or numbered).
inline Call makeCall(CollKind kind, const void* sendbuff, void* recvbuff, size_t count,
                     weftDataType_t datatype, weftRedOp_t op, int root, int peer) {
  Call c;
  c.kind = kind;
  c.args.sendbuff = sendbuff;
  c.args.recvbuff = recvbuff;
  c.args.count = count;
  c.args.datatype = datatype;
  c.args.op = op;
  c.args.root = root;
  c.peer = peer;
  return c;
}

// "allreduce #12 (1024 x float, sum)" for error sentences.
std::string describeCall(const Call& call);

// Checks every argument of `call` on `comm` for the API function `fn`, and
// records in call->buffers what its buffers are (for calls on a stream).
weftResult_t validateCall(weftComm* comm, const char* fn, Call* call, weftStream_t stream);

// Runs the calls of one communicator (a single call, or a group's): the
// collectives in call order, then all point-to-point calls fused. A transport
// failure breaks the communicator.
weftResult_t executeCalls(weftComm* comm, const Call* calls, size_t ncalls);
inline weftResult_t executeCalls(weftComm* comm, const std::vector<Call>& calls) {
  return executeCalls(comm, calls.data(), calls.size());
}

// Checks `call` against the peers' calls (its call header, call_header.h)
// without moving data: for a call whose data moves elsewhere (the GPU ring
// of device/device_ring.h). Any failure breaks the communicator.
weftResult_t checkCallOnly(weftComm* comm, const Call& call);

// The time `call` would take on this rank by comm's cost model, in
// microseconds (core/call_estimate.cc): what weftGroupSimulateEnd adds up.
double estimateCallUs(const weftComm* comm, const Call& call);

// True while this thread is between weftGroupStart and weftGroupEnd.
bool inGroup();
// Records a validated call into this thread's open group; every call of a
// group on one communicator must use the same stream (or none).
weftResult_t recordInGroup(weftComm* comm, const char* fn, const Call& call);

}  // namespace weft
