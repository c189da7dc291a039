// Allreduce and allgather through the tuner: across nodes in auto mode, and
// whenever WEFT_ALGO forces tree or hier (or ring across nodes, which then runs
// in node order). Single-node calls in auto mode keep dispatch.cc's paths
// (shared-memory boards, single copy). WEFT_CHUNK, when set, overrides the
// tuner's chunk. WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING logs each choice
// (once per run of calls of one size).
#include "core/dispatch_tuned.h"

#include "base/log.h"
#include "collectives/hier.h"
#include "collectives/reduce.h"
#include "core/comm.h"

namespace weft {
namespace {

TunedChoice forcedChoice(const weftComm* comm, bool allReduce, size_t bytes) {
  const Tuner& tuner = comm->tuner;
  const bool hier = hierUsable(comm->topo);
  TunedChoice ch;
  switch (comm->config.algo) {
    case Algo::kTree:
      ch.algo = allReduce ? Tuned::kTree : Tuned::kRing;
      break;
    case Algo::kHier:
      ch.algo = hier ? Tuned::kHierRing : Tuned::kRing;
      break;
    case Algo::kRecursiveDoubling:
      ch.algo = allReduce ? Tuned::kRd : Tuned::kRing;
      break;
    case Algo::kHalvingDoubling:
      ch.algo = allReduce ? Tuned::kRhd : Tuned::kRing;
      break;
    default:
      ch.algo = Tuned::kRing;
      break;
  }
  ch.predictedUs = allReduce ? tuner.allReduceUs(ch.algo, bytes, &ch.chunkBytes)
                             : tuner.allGatherUs(ch.algo, bytes, &ch.chunkBytes);
  ch.streams = comm->config.nstreams;
  return ch;
}

void logChoice(const weftComm* comm, CollKind kind, size_t bytes, const TunedChoice& ch) {
  thread_local size_t lastBytes = 0;
  thread_local int lastKind = -1;
  if (!logEnabled(LogLevel::kInfo, kLogTUNING)) return;
  if (lastBytes == bytes && lastKind == static_cast<int>(kind)) return;
  lastBytes = bytes;
  lastKind = static_cast<int>(kind);
  WEFT_INFO(TUNING, "rank %d: %s of %zu B: %s%s, chunk %zu, %d stream(s), predicted %.1f us",
            comm->rank, kind == CollKind::kAllReduce ? "allreduce" : "allgather", bytes,
            tunedName(ch.algo), comm->config.algo == Algo::kAuto ? "" : " (WEFT_ALGO)",
            ch.chunkBytes, ch.streams, ch.predictedUs);
}

// Runs `call` as `ch` says (logged), with its chunk and streams on the ring view.
weftResult_t runChoice(weftComm* comm, const Call& call, size_t bytes, TunedChoice ch) {
  const bool allReduce = call.kind == CollKind::kAllReduce;
  const CollArgs& a = call.args;
  const CommTopo& topo = comm->topo;
  if (comm->config.chunkForced) ch.chunkBytes = comm->config.chunkBytes;
  logChoice(comm, call.kind, bytes, ch);

  CollContext& ctx = comm->ctx;
  ctx.chunkBytes = ch.chunkBytes;
  topo.ring->setStreams(ch.streams);
  CollContext ringCtx = CommTopo::on(ctx, topo.ring.get(), topo.ringPos);
  weftResult_t r = weftSuccess;
  switch (ch.algo) {
    case Tuned::kOneshot:
      r = oneshotAllReduce(ctx, a);
      break;
    case Tuned::kRing:
      r = allReduce ? ringAllReduce(ringCtx, a) : ringAllGather(ctx, a);
      break;
    case Tuned::kTree:
      r = treeAllReduce(ringCtx, topo.ringTree, a);
      break;
    case Tuned::kHierRing:
    case Tuned::kHierTree:
      r = allReduce ? hierAllReduce(ctx, topo, a,
                                    ch.algo == Tuned::kHierTree ? Across::kTree : Across::kRing)
                    : hierAllGather(ctx, topo, a);
      break;
    case Tuned::kRd:
      r = hierUsable(topo) ? hierAllReduce(ctx, topo, a, Across::kRecursiveDoubling)
                           : recursiveDoublingAllReduce(ringCtx, a);
      break;
    case Tuned::kRhd:
      r = hierUsable(topo) ? hierAllReduce(ctx, topo, a, Across::kHalvingDoubling)
                           : halvingDoublingAllReduce(ringCtx, a);
      break;
    case Tuned::kDirect:
      r = directAllGather(ctx, a);
      break;
    default:
      r = ringAllReduce(ringCtx, a);
      break;
  }
  ctx.chunkBytes = comm->config.chunkBytes;
  topo.ring->setStreams(0);
  return r;
}

}  // namespace

bool oneRoundFits(const weftComm* comm, size_t bytes, size_t receiveMax) {
  const size_t receives = static_cast<size_t>(comm->nranks - 1) * bytes;
  return bytes <= comm->config.oneshotMax && receives <= receiveMax;
}

bool oneshotFits(const weftComm* comm, size_t bytes) {
  return oneRoundFits(comm, bytes, kOneshotReceiveMax) &&
         oneshotStagingBytes(comm->nranks, bytes) <= comm->ctx.stagingBytes;
}

bool runTuned(weftComm* comm, const Call& call, weftResult_t* result) {
  const bool allReduce = call.kind == CollKind::kAllReduce;
  if (!allReduce && call.kind != CollKind::kAllGather) return false;
  if (!comm->tuner.ready() || comm->nranks == 1) return false;
  const Algo algo = comm->config.algo;
  if (algo == Algo::kOneshot) return false;
  if ((algo == Algo::kAuto || algo == Algo::kRing) && comm->topo.nnodes == 1) return false;
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  const TunedChoice ch = algo != Algo::kAuto ? forcedChoice(comm, allReduce, bytes)
                                             : (allReduce ? comm->tuner.pickAllReduce(bytes)
                                                          : comm->tuner.pickAllGather(bytes));
  *result = runChoice(comm, call, bytes, ch);
  return true;
}

// The tree stops here: measured over loopback TCP, 4 ranks at 64 KiB tree 80
// us, ring 97, one round 190; 8 ranks at 16-64 KiB tree 160-216, ring
// 334-404, but at 128 KiB the ring 516 against the tree's 591. The tuner's
// link model comes from a two-rank probe and does not see ranks queueing for
// cores, so it is not asked.
constexpr size_t kSingleNodeTreeMax = 64 << 10;

bool singleNodeTreeFits(const weftComm* comm, size_t bytes) {
  return comm->tuner.ready() && comm->nranks > 2 && bytes <= kSingleNodeTreeMax;
}

weftResult_t runSingleNodeTree(weftComm* comm, const Call& call) {
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  TunedChoice ch;
  ch.algo = Tuned::kTree;
  ch.predictedUs = comm->tuner.allReduceUs(Tuned::kTree, bytes, &ch.chunkBytes);
  ch.streams = comm->config.nstreams;
  return runChoice(comm, call, bytes, ch);
}

}  // namespace weft
