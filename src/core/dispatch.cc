// Executes validated calls on one communicator: runs each collective with the
// algorithm the selection table picks (algo_table.h), fuses point-to-point
// calls, and turns transport failures into a broken communicator with a
// sentence that names the call.
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "collectives/any_source.h"
#include "collectives/header_plan.h"
#include "collectives/reduce.h"
#include "core/algo_table.h"
#include "core/call.h"
#include "core/comm.h"

namespace weft {

std::string describeCall(const Call& c) {
  char buf[160];
  int len =
      snprintf(buf, sizeof(buf), "%s #%llu (%zu x %s", collName(c.kind),
               static_cast<unsigned long long>(c.seq), c.args.count, datatypeName(c.args.datatype));
  if (c.kind == CollKind::kAllReduce || c.kind == CollKind::kReduceScatter ||
      c.kind == CollKind::kReduce)
    len += snprintf(buf + len, sizeof(buf) - len, ", %s", redOpName(c.args.op));
  if (c.kind == CollKind::kBroadcast || c.kind == CollKind::kReduce)
    len += snprintf(buf + len, sizeof(buf) - len, ", root %d", c.args.root);
  if (c.anySource != nullptr)
    len += snprintf(buf + len, sizeof(buf) - len, ", any source");
  else if (isP2P(c.kind))
    len += snprintf(buf + len, sizeof(buf) - len, ", peer %d", c.peer);
  snprintf(buf + len, sizeof(buf) - len, ")");
  return buf;
}

namespace {

// A kOpPreMulSum call (core/premul_op.h): this rank's input times its scalar,
// then a sum. The scaled input goes to recvbuff where the call's output covers
// the whole input (allreduce; reduce on the root), else to scratch memory:
// the caller's sendbuff is never written.
weftResult_t runPreMulSum(weftComm* comm, const Call& call) {
  const CollArgs& a = call.args;
  const size_t bytes = a.count * datatypeSize(a.datatype);
  const size_t inBytes = call.kind == CollKind::kReduceScatter ? bytes * comm->nranks : bytes;
  unsigned char scalar[sizeof call.premul.value];
  std::memcpy(scalar, call.premul.read != nullptr ? call.premul.read : call.premul.value,
              datatypeSize(a.datatype));
  Call run = call;
  run.args.op = weftSum;
  const bool intoRecv =
      call.kind == CollKind::kAllReduce || (call.kind == CollKind::kReduce && comm->rank == a.root);
  void* scaled = a.recvbuff;
  if (!intoRecv) {
    std::vector<char>& scratch = comm->premulScratch;  // capacity kept across calls
    if (scratch.size() < inBytes) scratch.resize(inBytes);
    scaled = scratch.data();
  }
  scaleElements(a.datatype, scaled, a.sendbuff, inBytes / datatypeSize(a.datatype), scalar);
  run.args.sendbuff = scaled;  // in place for allreduce and reduce, apart for reduce-scatter
  return runSelected(comm, run, bytes);
}

weftResult_t runCollectiveOn(weftComm* comm, const Call& call) {
  if (call.args.op == kOpPreMulSum) return runPreMulSum(comm, call);
  return runSelected(comm, call, call.args.count * datatypeSize(call.args.datatype));
}

// Fills the communicator's call header for `call` (call_header.h); the
// call's first board publish or flow run sends and checks it.
void armCallCheck(weftComm* comm, const Call& call) {
  CallHeader& h = comm->check.mine;
  h.magic = kCallMagic;
  h.kind = static_cast<uint8_t>(call.kind);
  h.datatype = static_cast<uint8_t>(call.args.datatype);
  h.op = static_cast<uint8_t>(call.args.op);
  h.root = call.args.root;
  h.seq = ++comm->collSeq;
  h.turn = comm->config.checkThreads ? call.turn : 0;
  h.count = call.args.count;
  comm->check.pending = true;
}

// A call of at least WEFT_SOCKET_PER_DIRECTION bytes per rank runs in TCP's
// bulk mode (tcp_transport.h). Every rank picks alike: the size is the call's
// count and datatype, which the call header checks. Headers stay on the
// small-call channels either way (headerChannels), so ranks that disagree
// about the size still meet on one byte stream and see the mismatch.
weftResult_t runCollective(weftComm* comm, const Call& call) {
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  for (Transport* t : comm->transports) t->beginCall(bytes);
  const weftResult_t r = runCollectiveOn(comm, call);
  for (Transport* t : comm->transports) t->endCall();
  return r;
}

weftResult_t exchangeHeaderOnly(weftComm* comm) {
  if (comm->board) {
    int slot = 0;
    return comm->board->publishAndWait(nullptr, 0, comm->ctx.run, &slot);
  }
  return exchangeCallHeader(comm->ctx.run);
}

// The peer a weftRecvAny receives from (collectives/any_source.h), also
// written to the caller's *source. A timeout or abort leaves the byte streams
// as they were; a peer's failure breaks the communicator, as in any receive.
weftResult_t findAnySource(weftComm* comm, const Call& call, int* peer) {
  weftResult_t r = waitForAnySender(comm->ctx, comm->lastAnySource, peer);
  if (r == weftSuccess) {
    comm->lastAnySource = *peer;
    *call.anySource = *peer;
    return weftSuccess;
  }
  std::string text =
      "rank " + std::to_string(comm->rank) + ": " + describeCall(call) + ": " + lastError();
  if (r != weftTimeout && r != weftInvalidUsage) comm->markBroken(r, text);
  return setErrorString(r, text);
}

}  // namespace

weftResult_t checkCallOnly(weftComm* comm, const Call& call) {
  armCallCheck(comm, call);
  weftResult_t r = exchangeHeaderOnly(comm);
  comm->check.pending = false;
  if (r == weftSuccess) return weftSuccess;
  std::string text =
      "rank " + std::to_string(comm->rank) + ": " + describeCall(call) + ": " + lastError();
  comm->markBroken(r, text);
  return setErrorString(r, text);
}

weftResult_t executeCalls(weftComm* comm, const Call* calls, size_t ncalls) {
  // After the calls, user buffers may be freed: drop their verbs registrations.
  struct EndCalls {
    weftComm* comm;
    ~EndCalls() {
      for (Transport* t : comm->transports) t->endCalls();
    }
  } endCalls{comm};
  if (comm->broken.load(std::memory_order_acquire)) {  // no lock on the way of every call
    std::lock_guard<std::mutex> lock(comm->failMu);
    return setError(comm->failure, "communicator is broken by an earlier failure: %s",
                    comm->failureText.c_str());
  }
  std::vector<P2POp>& p2p = comm->p2pCalls;  // capacity kept: no allocation per call
  p2p.clear();
  const Call* firstP2P = nullptr;
  for (const Call* it = calls; it != calls + ncalls; ++it) {
    const Call& call = *it;
    if (isP2P(call.kind)) {
      if (firstP2P == nullptr) firstP2P = &call;
      int peer = call.peer;
      if (call.anySource != nullptr) WEFT_CHECK(findAnySource(comm, call, &peer));
      size_t bytes = call.args.count * datatypeSize(call.args.datatype);
      char* buf = call.kind == CollKind::kSend
                      ? const_cast<char*>(static_cast<const char*>(call.args.sendbuff))
                      : static_cast<char*>(call.args.recvbuff);
      // With call checks, empty ones too: their size header meets the peer's call.
      if (bytes > 0 || comm->config.checkCalls)
        p2p.push_back(P2POp{call.kind == CollKind::kSend, peer, buf, bytes, call.args.count,
                            static_cast<int>(call.args.datatype)});
      continue;
    }
    const bool empty = call.args.count == 0 && call.kind != CollKind::kBarrier;
    if (empty && !comm->config.checkCalls) continue;
    if (comm->config.checkCalls) armCallCheck(comm, call);
    // Count 0 moves no data, but its header still meets the peers' calls.
    weftResult_t r = empty ? exchangeHeaderOnly(comm) : runCollective(comm, call);
    comm->check.pending = false;
    if (r != weftSuccess) {
      std::string text =
          "rank " + std::to_string(comm->rank) + ": " + describeCall(call) + ": " + lastError();
      // A mismatch leaves the byte streams out of step: the communicator is broken.
      if ((r != weftInvalidArgument && r != weftInvalidUsage) || comm->check.mismatch)
        comm->markBroken(r, text);
      return setErrorString(r, text);
    }
  }
  if (!p2p.empty()) {
    comm->check.mismatch = false;
    weftResult_t r = runP2P(comm->ctx, p2p.data(), p2p.size(), comm->config.checkCalls);
    if (r != weftSuccess) {
      std::string what = ncalls > 1 ? "group of point-to-point calls starting with " : "";
      std::string text = "rank " + std::to_string(comm->rank) + ": " + what +
                         describeCall(*firstP2P) + ": " + lastError();
      if (r != weftInvalidUsage || comm->check.mismatch) comm->markBroken(r, text);
      return setErrorString(r, text);
    }
  }
  return weftSuccess;
}

}  // namespace weft
