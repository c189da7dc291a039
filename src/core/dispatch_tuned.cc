// Allreduce and allgather through the tuner: across nodes in auto mode, and
// whenever WEFT_ALGO forces tree or hier (or ring across nodes, which then runs
// in node order). Single-node calls in auto mode keep dispatch.cc's paths
// (shared-memory boards, single copy). WEFT_CHUNK, when set, overrides the
// tuner's chunk. WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=TUNING logs each choice
// (once per run of calls of one size).
#include "core/dispatch_tuned.h"

#include "collectives/hier.h"
#include "collectives/reduce.h"
#include "core/comm.h"
#include "core/log.h"

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

// One node without shared memory (WEFT_SHM_DISABLE=1, or segments that
// could not be mapped): allreduces past the one-round limit and up to this
// size take the double binary tree instead of the ring. Measured over loopback
// TCP, 4 ranks at 64 KiB: tree 80 us, ring 97, one round 190; 8 ranks at
// 16-64 KiB: tree 160-216, ring 334-404. The tuner's link model comes from a
// two-rank probe and does not see ranks queueing for cores, so it is not asked.
constexpr size_t kSingleNodeTreeMax = 64 << 10;

bool singleNodeTree(const weftComm* comm, bool allReduce, size_t bytes) {
  return allReduce && comm->config.algo == Algo::kAuto && !comm->board && comm->nranks > 2 &&
         bytes <= kSingleNodeTreeMax && !oneshotFits(comm, bytes);
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
  const CommTopo& topo = comm->topo;
  if (algo == Algo::kOneshot) return false;
  const CollArgs& a = call.args;
  const size_t bytes = a.count * datatypeSize(a.datatype);
  const bool tree1 = topo.nnodes == 1 && singleNodeTree(comm, allReduce, bytes);
  if ((algo == Algo::kAuto || algo == Algo::kRing) && topo.nnodes == 1 && !tree1) return false;

  TunedChoice ch;
  if (tree1) {
    ch.algo = Tuned::kTree;
    ch.predictedUs = comm->tuner.allReduceUs(Tuned::kTree, bytes, &ch.chunkBytes);
    ch.streams = comm->config.nstreams;
  } else {
    ch = algo != Algo::kAuto
             ? forcedChoice(comm, allReduce, bytes)
             : (allReduce ? comm->tuner.pickAllReduce(bytes) : comm->tuner.pickAllGather(bytes));
  }
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
      r = allReduce ? hierAllReduce(ctx, topo, a, ch.algo == Tuned::kHierTree)
                    : hierAllGather(ctx, topo, a);
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
  *result = r;
  return true;
}

}  // namespace weft
