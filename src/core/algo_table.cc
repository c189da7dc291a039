// The selection table (algo_table.h): the rows, how a call picks one, and
// how each runs on a communicator.
#include "core/algo_table.h"

#include <cstdint>

#include "base/error.h"
#include "base/log.h"
#include "collectives/dissemination.h"
#include "collectives/hier.h"
#include "collectives/modelled_run.h"
#include "collectives/reduce.h"
#include "core/comm.h"

namespace weft {
namespace {

constexpr uint16_t kindBit(CollKind k) { return static_cast<uint16_t>(1u << static_cast<int>(k)); }
constexpr uint16_t kAR = kindBit(CollKind::kAllReduce), kAG = kindBit(CollKind::kAllGather),
                   kRS = kindBit(CollKind::kReduceScatter), kBC = kindBit(CollKind::kBroadcast),
                   kRD = kindBit(CollKind::kReduce), kA2A = kindBit(CollKind::kAllToAll),
                   kBAR = kindBit(CollKind::kBarrier);

// What a row looks at to say whether it applies.
struct Sel {
  const weftComm* comm;
  const Call& call;
  size_t bytes;
  AlgoId forced;  // WEFT_ALGO (kAuto: none)
};

bool oneRoundFits(const Sel& s, size_t receiveMax) {
  const size_t receives = static_cast<size_t>(s.comm->nranks - 1) * s.bytes;
  return s.bytes <= s.comm->config.oneshotMax && receives <= receiveMax;
}
bool stagingFits(const Sel& s) {
  return oneshotStagingBytes(s.comm->nranks, s.bytes) <= s.comm->ctx.stagingBytes;
}
// WEFT_ALGO=oneshot, or auto within WEFT_ONESHOT_MAX: the rooted one-round forms.
bool smallCall(const Sel& s) {
  return s.forced == AlgoId::kOneshot ||
         (s.forced == AlgoId::kAuto && s.bytes <= s.comm->config.oneshotMax);
}

// ---- Modelled rows: across nodes, allreduce and allgather, costed by the
// tuner; the table's order breaks ties.
struct ModelledRow {
  AlgoId id;
  uint16_t kinds;
};
const ModelledRow kModelledRows[] = {
    {AlgoId::kOneshot, kAR},
    {AlgoId::kDirect, kAG},
    {AlgoId::kRing, kAR | kAG},
    {AlgoId::kTree, kAR},
    {AlgoId::kHierRing, kAR | kAG},
    {AlgoId::kHierTree, kAR},
    {AlgoId::kHierLeaf, kAR},
    {AlgoId::kRd, kAR},
    {AlgoId::kRhd, kAR},
};

bool modelled(const Sel& s) {
  const CollKind k = s.call.kind;
  if (k != CollKind::kAllReduce && k != CollKind::kAllGather) return false;
  if (!s.comm->tuner.ready() || s.comm->nranks == 1 || s.forced == AlgoId::kOneshot) return false;
  // On one node, ring and auto keep the node rows (boards, single copy).
  return !((s.forced == AlgoId::kAuto || s.forced == AlgoId::kRing) && s.comm->topo.nnodes == 1);
}

double costOf(const Sel& s, AlgoId id, size_t* chunk) {
  const Tuner& t = s.comm->tuner;
  return s.call.kind == CollKind::kAllReduce ? t.allReduceUs(id, s.bytes, chunk)
                                             : t.allGatherUs(id, s.bytes, chunk);
}

AlgoPick pickModelled(const Sel& s) {
  const uint16_t kind = kindBit(s.call.kind);
  AlgoPick pick;
  pick.modelled = true;
  if (s.forced != AlgoId::kAuto) {  // WEFT_ALGO filters the rows; none left: the ring
    pick.id = AlgoId::kRing;
    pick.why = "WEFT_ALGO";
    const bool hier = hierUsable(s.comm->topo), leaf = hierLeafUsable(s.comm->topo);
    for (const ModelledRow& row : kModelledRows)
      if (row.id == s.forced && (row.kinds & kind) && (row.id != AlgoId::kHierRing || hier) &&
          (row.id != AlgoId::kHierLeaf || leaf))
        pick.id = row.id;
    pick.plan.algo = pick.id;
    pick.plan.predictedUs = costOf(s, pick.id, &pick.plan.chunkBytes);
    pick.plan.streams = s.comm->config.nstreams;
    return pick;
  }
  pick.why = "cheapest";
  pick.plan.predictedUs = -1;
  for (const ModelledRow& row : kModelledRows) {
    if (!(row.kinds & kind)) continue;
    size_t chunk = 0;
    const double us = costOf(s, row.id, &chunk);
    if (pick.plan.predictedUs < 0 || us < pick.plan.predictedUs) {
      pick.id = row.id;
      pick.plan = AlgoChoice{row.id, chunk, 1, us};
    }
  }
  if (pick.id == AlgoId::kRing) {
    const size_t segment = s.call.kind == CollKind::kAllReduce
                               ? s.bytes / static_cast<size_t>(s.comm->nranks)
                               : s.bytes;
    pick.plan.streams = s.comm->tuner.streamsFor(segment, pick.plan.chunkBytes);
  }
  return pick;
}

// ---- Node rows: no model; the first that applies runs.
struct NodeRow {
  AlgoId id;
  uint16_t kinds;
  bool (*applies)(const Sel&);
};

const NodeRow kNodeRows[] = {
    // All ranks on this node, small calls: the shared-memory boards.
    {AlgoId::kBoard, kAR | kAG | kBC | kRD | kBAR,
     [](const Sel& s) {
       return s.comm->board && s.forced != AlgoId::kRing && s.bytes <= LocalBoard::kMaxBytes;
     }},
    // All ranks on this node, larger calls: single copy between the user buffers.
    {AlgoId::kSingleCopy, kAR | kRS | kAG | kBC | kA2A,
     [](const Sel& s) { return s.comm->copy && s.forced == AlgoId::kAuto; }},
    // From here on over the channels.
    {AlgoId::kOneshot, kAR | kBAR,
     [](const Sel& s) {
       if (s.call.kind == CollKind::kBarrier) return true;
       if (s.forced == AlgoId::kOneshot) return stagingFits(s);
       return s.forced == AlgoId::kAuto && s.comm->nranks <= kDirectRanksMax &&
              oneRoundFits(s, kOneshotReceiveMax) && stagingFits(s);
     }},
    // The same calls on more ranks: recursive doubling, log2(n) exchanges
    // with one peer each, not n - 1 messages each way and a connection to
    // every peer.
    {AlgoId::kRd, kAR,
     [](const Sel& s) {
       return s.forced == AlgoId::kAuto && s.comm->nranks > kDirectRanksMax &&
              oneRoundFits(s, kOneshotReceiveMax);
     }},
    // Nodes of equal size: all-to-all through the node, forced (hier) or on a
    // rail-optimised fabric, where it keeps the traffic between nodes on rails.
    {AlgoId::kHierRing, kA2A,
     [](const Sel& s) {
       return s.forced == AlgoId::kHierRing
                  ? hierUsable(s.comm->topo)
                  : s.forced == AlgoId::kAuto && hierAllToAllPreferred(s.comm->topo);
     }},
    // Small broadcasts on more ranks than one round suits: a binomial tree
    // (WEFT_ALGO=tree forces it at any size).
    {AlgoId::kTree, kBC,
     [](const Sel& s) {
       return s.forced == AlgoId::kTree ||
              (smallCall(s) && s.forced == AlgoId::kAuto && s.comm->nranks > kDirectRanksMax);
     }},
    {AlgoId::kDirect, kAG | kBC | kRD | kA2A,
     [](const Sel& s) {
       switch (s.call.kind) {
         case CollKind::kAllGather:
           return s.forced == AlgoId::kOneshot ||
                  (s.forced == AlgoId::kAuto && oneRoundFits(s, kDirectGatherReceiveMax));
         case CollKind::kBroadcast:
           return smallCall(s);
         case CollKind::kReduce:
           return smallCall(s) && stagingFits(s);
         default:
           return true;  // all-to-all
       }
     }},
    // One node without the boards (no shared memory): the tree for mid sizes.
    {AlgoId::kTree, kAR,
     [](const Sel& s) {
       return s.forced == AlgoId::kAuto && !s.comm->board && s.comm->tuner.ready() &&
              s.comm->nranks > 2 && s.bytes <= kSingleNodeTreeMax;
     }},
    {AlgoId::kRing, kAR | kAG | kRS, [](const Sel&) { return true; }},
    {AlgoId::kChain, kBC | kRD, [](const Sel&) { return true; }},
};

AlgoPick pickNodeRow(const Sel& s) {
  AlgoPick pick;
  pick.why = "first that applies";
  const uint16_t kind = kindBit(s.call.kind);
  for (const NodeRow& row : kNodeRows) {
    if ((row.kinds & kind) && row.applies(s)) {
      pick.id = row.id;
      break;
    }
  }
  pick.plan.algo = pick.id;
  if (pick.id == AlgoId::kTree && s.call.kind == CollKind::kAllReduce) {  // the tuner's chunk
    pick.plan.predictedUs =
        s.comm->tuner.allReduceUs(AlgoId::kTree, s.bytes, &pick.plan.chunkBytes);
    pick.plan.streams = s.comm->config.nstreams;
    pick.modelled = true;
  }
  return pick;
}

// ---- The GPU ring: calls on a CUDA stream, alone (selectGpuRing).
const NodeRow kGpuRingRow = {
    AlgoId::kGpuRing, kAR | kAG | kRS | kBC | kRD, [](const Sel& s) {
      // A forced ring is the ring on either executor.
      if (s.forced != AlgoId::kAuto && s.forced != AlgoId::kRing && s.forced != AlgoId::kGpuRing)
        return false;
      if (s.comm->peerRing.state != GpuPeerRing::State::kOn || s.bytes == 0) return false;
      const CollKind k = s.call.kind;
      if (k == CollKind::kAllGather || k == CollKind::kBroadcast) return true;
      const weftRedOp_t op = s.call.args.op;
      return op == weftSum || op == weftProd || op == weftMax || op == weftMin;
    }};

void logPick(const weftComm* comm, const Call& call, size_t bytes, const AlgoPick& pick) {
  thread_local size_t lastBytes = 0;
  thread_local int lastKind = -1;
  thread_local AlgoId lastId = AlgoId::kAuto;
  if (!logEnabled(LogLevel::kInfo, kLogTUNING)) return;
  const int kind = static_cast<int>(call.kind);
  if (lastBytes == bytes && lastKind == kind && lastId == pick.id) return;
  lastBytes = bytes;
  lastKind = kind;
  lastId = pick.id;
  if (!pick.modelled) {
    WEFT_INFO(TUNING, "rank %d: %s of %zu B: %s (%s)", comm->rank, collName(call.kind), bytes,
              algoName(pick.id), pick.why);
    return;
  }
  WEFT_INFO(TUNING, "rank %d: %s of %zu B: %s (%s), chunk %zu, %d stream(s), predicted %.1f us",
            comm->rank, collName(call.kind), bytes, algoName(pick.id), pick.why,
            pick.plan.chunkBytes, pick.plan.streams, pick.plan.predictedUs);
}

// A modelled pick (and the single-node tree) runs with its chunk and streams
// (collectives/modelled_run.h); the communicator's defaults come back after.
weftResult_t runPlanned(weftComm* comm, const Call& call, const AlgoChoice& plan) {
  weftResult_t r =
      runModelled(comm->ctx, comm->topo, call.kind == CollKind::kAllReduce, call.args, plan);
  comm->ctx.chunkBytes = comm->config.chunkBytes;
  comm->topo.ring->setStreams(0);
  return r;
}

weftResult_t runOnBoard(weftComm* comm, const Call& call) {
  const CollArgs& a = call.args;
  const FlowRunOptions& run = comm->ctx.run;
  switch (call.kind) {
    case CollKind::kAllReduce:
      return comm->board->allReduce(a, run);
    case CollKind::kAllGather:
      return comm->board->allGather(a, run);
    case CollKind::kBroadcast:
      return comm->board->broadcast(a, run);
    case CollKind::kReduce:
      return comm->board->reduce(a, run);
    default:
      return comm->board->barrier(run);
  }
}

weftResult_t runSingleCopy(weftComm* comm, const Call& call) {
  CollContext& ctx = comm->ctx;
  const CollArgs& a = call.args;
  switch (call.kind) {
    case CollKind::kAllReduce:
      return comm->copy->allReduce(ctx, a);
    case CollKind::kReduceScatter:
      return comm->copy->reduceScatter(ctx, a);
    case CollKind::kAllGather:
      return comm->copy->allGather(ctx, a);
    case CollKind::kBroadcast:
      return comm->copy->broadcast(ctx, a);
    default:
      return comm->copy->allToAll(ctx, a);
  }
}

// The node rows over the channels, on the communicator's own context.
weftResult_t runOverChannels(weftComm* comm, const Call& call, AlgoId id) {
  CollContext& ctx = comm->ctx;
  const CollArgs& a = call.args;
  switch (call.kind) {
    case CollKind::kAllReduce:
      return id == AlgoId::kOneshot ? oneshotAllReduce(ctx, a)
             : id == AlgoId::kRd    ? recursiveDoublingAllReduce(ctx, a)
                                    : ringAllReduce(ctx, a);
    case CollKind::kAllGather:
      return id == AlgoId::kDirect ? directAllGather(ctx, a) : ringAllGather(ctx, a);
    case CollKind::kReduceScatter:
      return ringReduceScatter(ctx, a);
    case CollKind::kBroadcast:
      return id == AlgoId::kDirect ? directBroadcast(ctx, a)
             : id == AlgoId::kTree ? binomialBroadcast(ctx, a)
                                   : chainBroadcast(ctx, a);
    case CollKind::kReduce:
      return id == AlgoId::kDirect ? directReduce(ctx, a) : chainReduce(ctx, a);
    case CollKind::kAllToAll:
      return id == AlgoId::kHierRing ? hierAllToAll(ctx, comm->topo, a) : directAllToAll(ctx, a);
    case CollKind::kBarrier:
      return disseminationBarrier(ctx);
    default:
      return setError(weftInternalError, "not a collective");
  }
}

}  // namespace

AlgoPick selectAlgo(const weftComm* comm, const Call& call, size_t bytes) {
  const Sel s{comm, call, bytes, comm->config.algo};
  return modelled(s) ? pickModelled(s) : pickNodeRow(s);
}

weftResult_t runSelected(weftComm* comm, const Call& call, size_t bytes) {
  AlgoPick pick = selectAlgo(comm, call, bytes);
  if (pick.modelled && comm->config.chunkForced) pick.plan.chunkBytes = comm->config.chunkBytes;
  logPick(comm, call, bytes, pick);
  if (pick.modelled) return runPlanned(comm, call, pick.plan);
  if (pick.id == AlgoId::kBoard) return runOnBoard(comm, call);
  if (pick.id == AlgoId::kSingleCopy) return runSingleCopy(comm, call);
  // The channel algorithms carry the call header themselves, except where the
  // boards exist: there every rank checks it on the board, whatever path its
  // call takes, so that ranks on different paths still meet.
  CollContext& ctx = comm->ctx;
  if (comm->board && ctx.run.check->pending) {
    int slot = 0;
    WEFT_CHECK(comm->board->publishAndWait(nullptr, 0, ctx.run, &slot));
  }
  return runOverChannels(comm, call, pick.id);
}

bool selectGpuRing(const weftComm* comm, const Call& call) {
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  const Sel s{comm, call, bytes, comm->config.algo};
  if (!(kGpuRingRow.kinds & kindBit(call.kind)) || !kGpuRingRow.applies(s)) return false;
  AlgoPick pick;
  pick.id = AlgoId::kGpuRing;
  pick.why = s.forced == AlgoId::kGpuRing ? "WEFT_ALGO" : "first that applies";
  logPick(comm, call, bytes, pick);
  return true;
}

}  // namespace weft
