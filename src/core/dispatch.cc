// Executes validated calls on one communicator: picks each collective's
// algorithm (one-round forms up to WEFT_ONESHOT_MAX bytes, pipelined ring and
// chain forms above, WEFT_ALGO to force; across nodes, allreduce and
// allgather go to the tuner, dispatch_tuned.cc), fuses point-to-point calls, and
// turns transport failures into a broken communicator with a sentence that
// names the call.
#include <cstdio>

#include "base/error.h"
#include "collectives/header_plan.h"
#include "collectives/reduce.h"
#include "core/call.h"
#include "core/comm.h"
#include "core/dispatch_tuned.h"

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
  if (isP2P(c.kind)) len += snprintf(buf + len, sizeof(buf) - len, ", peer %d", c.peer);
  snprintf(buf + len, sizeof(buf) - len, ")");
  return buf;
}

namespace {

// Runs one collective; see runCollective.
// All ranks on this node: small calls through the shared-memory boards,
// larger ones by single copy between the user buffers. False: neither took it.
bool runOnNode(weftComm* comm, const Call& call, size_t bytes, weftResult_t* result) {
  CollContext& ctx = comm->ctx;
  const CollArgs& a = call.args;
  const Algo algo = comm->config.algo;
  if (comm->board && algo != Algo::kRing && bytes <= LocalBoard::kMaxBytes) {
    switch (call.kind) {
      case CollKind::kAllReduce:
        return *result = comm->board->allReduce(a, ctx.run), true;
      case CollKind::kAllGather:
        return *result = comm->board->allGather(a, ctx.run), true;
      case CollKind::kBroadcast:
        return *result = comm->board->broadcast(a, ctx.run), true;
      case CollKind::kReduce:
        return *result = comm->board->reduce(a, ctx.run), true;
      case CollKind::kBarrier:
        return *result = comm->board->barrier(ctx.run), true;
      default:
        break;
    }
  }
  if (comm->copy && algo == Algo::kAuto) {
    switch (call.kind) {
      case CollKind::kAllReduce:
        return *result = comm->copy->allReduce(ctx, a), true;
      case CollKind::kReduceScatter:
        return *result = comm->copy->reduceScatter(ctx, a), true;
      case CollKind::kAllGather:
        return *result = comm->copy->allGather(ctx, a), true;
      case CollKind::kBroadcast:
        return *result = comm->copy->broadcast(ctx, a), true;
      case CollKind::kAllToAll:
        return *result = comm->copy->allToAll(ctx, a), true;
      default:
        break;
    }
  }
  return false;
}

// Everyone tells everyone "arrived": one round, n-1 one-byte messages each way.
weftResult_t channelBarrier(CollContext& ctx) {
  static const uint8_t arrived = 1;
  uint8_t out = 0;
  CollArgs b;
  b.sendbuff = &arrived;
  b.recvbuff = &out;
  b.count = 1;
  b.datatype = weftUint8;
  b.op = weftMax;
  return oneshotAllReduce(ctx, b);
}

// The algorithms over the channels (FIFOs): one-round forms when forced, or
// in auto mode for small messages; pipelined ring and chain forms above.
weftResult_t runOverChannels(weftComm* comm, const Call& call, size_t bytes) {
  CollContext& ctx = comm->ctx;
  const CollArgs& a = call.args;
  const Algo algo = comm->config.algo;
  const bool small =
      algo == Algo::kOneshot || (algo == Algo::kAuto && bytes <= comm->config.oneshotMax);
  const bool fitsStaging = oneshotStagingBytes(comm->nranks, bytes) <= ctx.stagingBytes;
  switch (call.kind) {
    case CollKind::kAllReduce:
      if (algo == Algo::kOneshot)
        return fitsStaging ? oneshotAllReduce(ctx, a) : ringAllReduce(ctx, a);
      if (algo == Algo::kAuto && oneshotFits(comm, bytes)) return oneshotAllReduce(ctx, a);
      if (algo == Algo::kAuto && !comm->board && singleNodeTreeFits(comm, bytes))
        return runSingleNodeTree(comm, call);
      return ringAllReduce(ctx, a);
    case CollKind::kAllGather:
      return algo == Algo::kOneshot ||
                     (algo == Algo::kAuto && oneRoundFits(comm, bytes, kDirectGatherReceiveMax))
                 ? directAllGather(ctx, a)
                 : ringAllGather(ctx, a);
    case CollKind::kReduceScatter:
      return ringReduceScatter(ctx, a);
    case CollKind::kBroadcast:
      return small ? directBroadcast(ctx, a) : chainBroadcast(ctx, a);
    case CollKind::kReduce:
      return small && fitsStaging ? directReduce(ctx, a) : chainReduce(ctx, a);
    case CollKind::kAllToAll:
      return directAllToAll(ctx, a);
    case CollKind::kBarrier:
      return channelBarrier(ctx);
    default:
      return setError(weftInternalError, "not a collective");
  }
}

weftResult_t runCollectiveOn(weftComm* comm, const Call& call) {
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  weftResult_t result = weftSuccess;
  if (runTuned(comm, call, &result)) return result;
  if (runOnNode(comm, call, bytes, &result)) return result;
  // The FIFO algorithms carry the call header themselves, except where the
  // boards exist: there every rank checks it on the board, whatever path its
  // call takes, so that ranks on different paths still meet.
  CollContext& ctx = comm->ctx;
  if (comm->board && ctx.run.check->pending) {
    int slot = 0;
    WEFT_CHECK(comm->board->publishAndWait(nullptr, 0, ctx.run, &slot));
  }
  return runOverChannels(comm, call, bytes);
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
  const size_t bulkMin = comm->config.bulkMin;
  comm->tcp->setBulk(bulkMin > 0 && bytes >= bulkMin);
  const weftResult_t r = runCollectiveOn(comm, call);
  comm->tcp->setBulk(false);
  return r;
}

weftResult_t exchangeHeaderOnly(weftComm* comm) {
  if (comm->board) {
    int slot = 0;
    return comm->board->publishAndWait(nullptr, 0, comm->ctx.run, &slot);
  }
  return exchangeCallHeader(comm->ctx.run);
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
      if (comm->ib) comm->ib->endCalls();
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
      size_t bytes = call.args.count * datatypeSize(call.args.datatype);
      char* buf = call.kind == CollKind::kSend
                      ? const_cast<char*>(static_cast<const char*>(call.args.sendbuff))
                      : static_cast<char*>(call.args.recvbuff);
      // With call checks, empty ones too: their size header meets the peer's call.
      if (bytes > 0 || comm->config.checkCalls)
        p2p.push_back(P2POp{call.kind == CollKind::kSend, call.peer, buf, bytes, call.args.count,
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
