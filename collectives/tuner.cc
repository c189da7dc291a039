// The tuner's cost model (see tuner.h). Notation: n ranks on N nodes, L per
// node; S bytes per rank; a (us) and b (us per byte) of a link; o the cost of
// moving one chunk (kPerMessageUs); r the host reduction's us per byte.
//   ring (ranks of a node adjacent):  the pipeline's critical path crosses
//     2(n-1) hops, 2(n-1)N/n of them between nodes, each costing a + one
//     chunk; each node link carries 2(n-1)/n S; 2(n-1)S/(n c) chunks pay o.
//   tree (double binary):  up and down the deepest path of tree 0 (its hops
//     between and inside nodes, CommTopo); the busiest node link carries
//     treeLinkLoad S each way; ~6 chunk moves per chunk of a half. Up to
//     kSingleTreeBytes, tree 0 carries everything.
//   oneshot:  one hop; a node's link carries L(n-L)S; the rank reduces (n-1)S.
//     The n-1 flows that converge on a link at once (incast) pay the shared
//     link's penalty, as do allgather's direct form, sized by all they bring
//     (L(n-L)S): they start together, so short pieces still make one long
//     contended burst (1 MiB gathered by 8 one-rank nodes: the one-round form
//     measured 0.8x the ring's busbw over TCP, docs/scale.md).
//   allgather ring: a pipeline of n-1 steps of one piece (one chunk of fill);
//     hier: N-1 steps across nodes on L rings sharing the link, then L-1
//     steps of N pieces inside the node.
//   hier:  an intra ring reduce-scatter and allgather (L-1 hops each, (L-1)/L
//     S each), and between them L rings (or trees) of N ranks on S/L bytes
//     that share the node's link: it carries 2(N-1)/N S.
//   rd, rhd:  hier's intra phases, and between them L doublings of N ranks
//     on S/L bytes, whose L hops at a time share the node's link (where hier
//     does not apply: one over all n, with one rank per node or one node).
//     rd: log2(N) hops of S/L each, reducing S/L; rhd: halving hops k =
//     0..log2(N)-1 of S/L/2^(k+1), reducing as much, and doubling hops
//     mirroring them. N not a power of two: a fold and an unfold of S/L.
// The chunk is the segment a step moves, up to WEFT_CHUNK: on oversubscribed
// nodes every extra chunk costs a wake-up worth far more than the pipeline
// fill it saves, so the textbook c = sqrt(segment o / b) loses to it.
// L rings of the hierarchical form share each node link; TCP rarely splits a
// link evenly, and each ring runs at its worst share along the ring, so the
// shared link's term is scaled by kSharedLinkPenalty (the factor measured
// for hier on 4x2 emulated nodes). The unevenness is congestion control's, so
// it needs long flows: a step of a few tens of KiB leaves each ring before the
// flows fight. The penalty grows with the step's bytes and is paid in full
// from kSharedLinkFullBytes; a flat penalty picked the ring where hier was
// faster (docs/performance-history.md, "size-dependent hier penalty").
#include "collectives/tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "collectives/hier.h"

namespace weft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double chunks(double bytes, size_t chunk) {
  double c = std::ceil(bytes / static_cast<double>(chunk));
  return c < 1 ? 1 : c;
}

// A pipelined ring phase: `steps` steps, each moving `seg` bytes over every
// link in chunks. The hops' latencies add up along the chain; every link
// carries steps x seg bytes, plus one chunk of pipeline fill; every chunk
// move costs o.
double pipeline(double steps, double hopLatency, double seg, size_t chunk, double usPerByte,
                double o) {
  double ce = std::min<double>(static_cast<double>(chunk), seg);
  return hopLatency + (steps * seg + ce) * usPerByte + steps * chunks(seg, chunk) * o;
}

}  // namespace

double Tuner::sharedLinkPenalty(double stepBytes) {
  const double full = std::min(1.0, stepBytes / kSharedLinkFullBytes);
  return 1.0 + (kSharedLinkPenalty - 1.0) * full;
}

void Tuner::setup(const CommTopo* topo, LinkModel intra, LinkModel inter, size_t maxChunk,
                  int maxStreams, size_t oneshotStaging) {
  topo_ = topo;
  intra_ = intra;
  inter_ = topo->nnodes > 1 ? inter : intra;
  maxChunk_ = maxChunk;
  maxStreams_ = maxStreams;
  oneshotStaging_ = oneshotStaging;
}

size_t Tuner::chunkFor(size_t segmentBytes) const {
  size_t chunk = (segmentBytes + 4095) / 4096 * 4096;
  if (chunk < kMinChunk) chunk = kMinChunk;
  if (chunk > maxChunk_) chunk = maxChunk_;
  return chunk;
}

int Tuner::streamsFor(size_t segmentBytes, size_t chunk) const {
  size_t s = segmentBytes / chunk;
  if (s < 1) s = 1;
  return s < static_cast<size_t>(maxStreams_) ? static_cast<int>(s) : maxStreams_;
}

// The hierarchical forms' reduce-scatter and allgather inside the node.
double Tuner::insideNodeUs(size_t bytes, size_t chunk) const {
  const int L = topo_->localRanks;
  const double S = static_cast<double>(bytes), r = 1e-3 / kReduceGBps;
  return 2 * pipeline(L - 1, (L - 1) * intra_.alphaUs, S / L, chunk, intra_.usPerByte(),
                      kPerMessageUs) +
         (L - 1.0) / L * S * r;
}

// Hierarchical allreduce: inside the node, then a ring or a tree across nodes
// between ranks of equal local index.
double Tuner::hierAllReduceUs(AlgoId algo, size_t bytes, size_t* chunk) const {
  if (!hierUsable(*topo_)) return kInf;
  const int N = topo_->nnodes, L = topo_->localRanks;
  const double S = static_cast<double>(bytes), o = kPerMessageUs, r = 1e-3 / kReduceGBps;
  const double ae = inter_.alphaUs, be = inter_.usPerByte();
  double part = S / L;  // what each rank carries across nodes
  *chunk = chunkFor(static_cast<size_t>(part / N));
  double across;
  if (algo == AlgoId::kHierRing) {
    // L rings share the node link (with rails, L / rails share each NIC): each
    // sees that many times its per-byte time.
    across = pipeline(2.0 * (N - 1), 2.0 * (N - 1) * ae, part / N, *chunk,
                      nodeShare() * be * topo_->fabric.ringLoad * sharedLinkPenalty(part / N), o) +
             (N - 1.0) / N * part * r;
  } else {
    double half = bytes / L <= kSingleTreeBytes ? part : part / 2;
    double ce = std::min<double>(static_cast<double>(*chunk), half);
    across = 2 * topo_->acrossTreeHops * (ae + ce * be) + 6 * chunks(half, *chunk) * o +
             std::max(topo_->acrossTreeLinkLoad, topo_->fabric.acrossTreeLoad) * S * be *
                 sharedLinkPenalty(half) +
             part * r;
  }
  return insideNodeUs(bytes, *chunk) + across;
}

// Leaf rings (kHierLeaf): inside the node, then a ring among the leaf's K
// nodes (no uplink crossed) around a ring across the M leaves on 1/K of the
// piece, whose K flows per leaf share its uplink; with a pod level, that ring
// is a ring among the pod's Q leaves around a ring across the P pods.
double Tuner::hierLeafAllReduceUs(size_t bytes, size_t* chunk) const {
  if (!hierLeafUsable(*topo_)) return kInf;
  const int L = topo_->localRanks, K = topo_->leafNodes->size(), M = topo_->crossLeaves->size();
  const double S = static_cast<double>(bytes), o = kPerMessageUs, r = 1e-3 / kReduceGBps;
  const double ae = inter_.alphaUs, be = inter_.usPerByte();
  const double part = S / L, piece = part / K;
  // A ring allreduce of `bytesIn` over `size` members whose flows see `load`.
  auto ringLevel = [&](int size, double bytesIn, double load) {
    return pipeline(2.0 * (size - 1), 2.0 * (size - 1) * ae, bytesIn / size, *chunk,
                    nodeShare() * be * load * sharedLinkPenalty(bytesIn / size), o) +
           (size - 1.0) / size * bytesIn * r;
  };
  *chunk = chunkFor(static_cast<size_t>(piece / M));
  double t = L > 1 ? insideNodeUs(bytes, *chunk) : 0;
  t += ringLevel(K, part, 1);
  if (topo_->crossPods == nullptr) return t + ringLevel(M, piece, topo_->fabric.crossLeafLoad);
  const int Q = topo_->podLeaves->size(), P = topo_->crossPods->size();
  return t + ringLevel(Q, piece, topo_->fabric.podLeafLoad) +
         ringLevel(P, piece / Q, topo_->fabric.crossPodLoad);
}

// Recursive doubling (kRd) and halving-doubling (kRhd): across nodes after
// the node's reduce-scatter where hier applies, else over every rank.
double Tuner::doublingAllReduceUs(AlgoId algo, size_t bytes, size_t* chunk) const {
  const int n = topo_->nranks, N = topo_->nnodes, L = topo_->localRanks;
  const double S = static_cast<double>(bytes), o = kPerMessageUs, r = 1e-3 / kReduceGBps;
  const LinkModel& slow = N > 1 ? inter_ : intra_;
  const bool hier = hierUsable(*topo_);
  if (!hier && N > 1 && !(topo_->uniform && L == 1)) return kInf;
  const int parts = hier ? N : n, flows = hier ? L : 1;
  const double part = hier ? S / L : S;
  int p2 = 1, steps = 0;
  for (; p2 * 2 <= parts; p2 *= 2) ++steps;
  const bool doubling = algo == AlgoId::kRd;
  *chunk = chunkFor(static_cast<size_t>(doubling ? part : part / 2));
  const size_t c = *chunk;
  // One hop of `b` bytes from each of the `flows` ranks that share a node's
  // link. The shared-link penalty applies with one flow too: over 8 one-rank
  // nodes halving-doubling's long steps take about 1.2x their ideal, and
  // without it the model would pick it over the ring up to 128 MiB.
  // The uplinks' load: per step where the fabric gives it (partners 2^k
  // nodes apart; the near steps, halving-doubling's largest, stay in a leaf).
  const FabricShape& fabric = topo_->fabric;
  auto uplinks = [&](int step) {
    if (N == 1) return 1.0;
    return step >= 0 && static_cast<size_t>(step) < fabric.pairStepLoad.size()
               ? fabric.pairStepLoad[step]
               : fabric.pairLoad;
  };
  auto hop = [&](double b, int step) {
    return slow.alphaUs + flows * b * slow.usPerByte() * uplinks(step) * sharedLinkPenalty(b) +
           chunks(b, c) * o;
  };
  double t = hier ? insideNodeUs(bytes, c) : 0;
  if (parts > p2) t += 2 * hop(part, -1) + part * r;  // pairs fold first, unfold last
  for (int k = 0; k < steps; ++k) {
    const double half = part / (2 << k);
    t += doubling ? hop(part, k) + part * r : 2 * hop(half, k) + half * r;
  }
  return t;
}

double Tuner::allReduceUs(AlgoId algo, size_t bytes, size_t* chunkOut) const {
  const int n = topo_->nranks, N = topo_->nnodes, L = topo_->localRanks;
  const double S = static_cast<double>(bytes);
  const double o = kPerMessageUs, r = 1e-3 / kReduceGBps;
  const LinkModel& slow = N > 1 ? inter_ : intra_;
  const double ae = inter_.alphaUs, be = inter_.usPerByte();
  const double ai = intra_.alphaUs, bi = intra_.usPerByte();
  size_t chunk = maxChunk_;
  double t = kInf;
  switch (algo) {
    case AlgoId::kOneshot: {
      if (static_cast<double>(n) * S > static_cast<double>(oneshotStaging_)) break;
      const double burst = nodeShare() * (n - L) * S;  // what converges on a node link
      double wire =
          N > 1 ? burst * be * topo_->fabric.pairLoad * sharedLinkPenalty(burst) : (n - 1) * S * bi;
      t = slow.alphaUs + (n - 1) * o + wire + (n - 1) * S * r;
      break;
    }
    case AlgoId::kRing: {
      double seg = S / n;
      chunk = chunkFor(static_cast<size_t>(seg));
      double hopsE = N > 1 ? 2.0 * (n - 1) * N / n : 0, hopsI = 2.0 * (n - 1) - hopsE;
      const double perByte = N > 1 ? be * topo_->fabric.ringLoad : bi;
      t = pipeline(2.0 * (n - 1), hopsE * ae + hopsI * ai, seg, chunk, perByte, o) +
          (n - 1.0) / n * S * r;
      break;
    }
    case AlgoId::kTree: {
      double half = bytes <= kSingleTreeBytes ? S : S / 2;
      chunk = chunkFor(static_cast<size_t>(half));
      double ce = std::min<double>(static_cast<double>(chunk), half);
      double wire =
          N > 1 ? std::max(topo_->treeLinkLoad, topo_->fabric.treeLoad) * S * be : 2 * S * bi;
      t = 2 * topo_->treeInterHops * (ae + ce * be) + 2 * topo_->treeIntraHops * (ai + ce * bi) +
          6 * chunks(half, chunk) * o + wire + S * r;
      break;
    }
    case AlgoId::kHierRing:
    case AlgoId::kHierTree:
      t = hierAllReduceUs(algo, bytes, &chunk);
      break;
    case AlgoId::kHierLeaf:
      t = hierLeafAllReduceUs(bytes, &chunk);
      break;
    case AlgoId::kRd:
    case AlgoId::kRhd:
      t = doublingAllReduceUs(algo, bytes, &chunk);
      break;
    default:
      break;
  }
  if (chunkOut) *chunkOut = chunk;
  return t;
}

double Tuner::allGatherUs(AlgoId algo, size_t bytes, size_t* chunkOut) const {
  const int n = topo_->nranks, N = topo_->nnodes, L = topo_->localRanks;
  const double S = static_cast<double>(bytes), o = kPerMessageUs;
  const LinkModel& slow = N > 1 ? inter_ : intra_;
  const double ae = inter_.alphaUs, be = inter_.usPerByte();
  const double ai = intra_.alphaUs, bi = intra_.usPerByte();
  size_t chunk = chunkFor(bytes);
  double t = kInf;
  switch (algo) {
    case AlgoId::kDirect: {
      // n-1 flows converge on each node's link at once (incast): like the
      // rings that share a link, it ends with its worst flow.
      const double burst = nodeShare() * (n - L) * S;
      t = slow.alphaUs + (n - 1) * o +
          (N > 1 ? burst * be * topo_->fabric.pairLoad * sharedLinkPenalty(burst)
                 : (n - 1) * S * bi);
      break;
    }
    case AlgoId::kRing: {
      // A pipeline of n-1 steps of one piece each: the chain's latencies, the
      // link's n-1 pieces and one chunk of fill, as in the allreduce's ring.
      double hopsE = N > 1 ? (n - 1.0) * N / n : 0, hopsI = (n - 1.0) - hopsE;
      t = pipeline(n - 1, hopsE * ae + hopsI * ai, S, chunk,
                   N > 1 ? be * topo_->fabric.ringLoad : bi, o);
      break;
    }
    case AlgoId::kHierRing:
      if (!hierUsable(*topo_)) break;
      // Across nodes L rings share the node link; then inside the node each
      // step moves N pieces.
      t = pipeline(N - 1, (N - 1) * ae, S, chunk,
                   nodeShare() * be * topo_->fabric.ringLoad * sharedLinkPenalty(S), o) +
          pipeline(L - 1, (L - 1) * ai, N * S, chunk, bi, o);
      break;
    default:
      break;
  }
  if (chunkOut) *chunkOut = chunk;
  return t;
}

AlgoChoice Tuner::pickAllReduce(size_t bytes) const {
  AlgoChoice best;
  best.predictedUs = kInf;
  for (AlgoId a : {AlgoId::kOneshot, AlgoId::kRing, AlgoId::kTree, AlgoId::kHierRing,
                   AlgoId::kHierTree, AlgoId::kHierLeaf, AlgoId::kRd, AlgoId::kRhd}) {
    size_t chunk = 0;
    double t = allReduceUs(a, bytes, &chunk);
    if (t < best.predictedUs) best = AlgoChoice{a, chunk, 1, t};
  }
  if (best.algo == AlgoId::kRing)
    best.streams = streamsFor(bytes / static_cast<size_t>(topo_->nranks), best.chunkBytes);
  return best;
}

AlgoChoice Tuner::pickAllGather(size_t bytes) const {
  AlgoChoice best;
  best.predictedUs = kInf;
  for (AlgoId a : {AlgoId::kDirect, AlgoId::kRing, AlgoId::kHierRing}) {
    size_t chunk = 0;
    double t = allGatherUs(a, bytes, &chunk);
    if (t < best.predictedUs) best = AlgoChoice{a, chunk, 1, t};
  }
  if (best.algo == AlgoId::kRing) best.streams = streamsFor(bytes, best.chunkBytes);
  return best;
}

std::string Tuner::table() const {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "allreduce model (us): %d ranks, %d nodes, %d per node; inter %.1f us %.3f GB/s, "
                "intra %.1f us %.3f GB/s\n%12s %10s %10s %10s %10s %10s %10s %10s %10s  pick "
                "(chunk)\n",
                topo_->nranks, topo_->nnodes, topo_->localRanks, inter_.alphaUs, inter_.gbps,
                intra_.alphaUs, intra_.gbps, "bytes", "oneshot", "ring", "tree", "hier",
                "hier-tree", "hier-leaf", "rd", "rhd");
  if (topo_->nnodes > 1) out += topo_->fabric.describe() + "\n";
  if (hierLeafUsable(*topo_)) {
    char levels[128];
    std::snprintf(levels, sizeof(levels), "hier-leaf levels: %d nodes per leaf, %d leaves",
                  topo_->leafNodes->size(), topo_->crossLeaves->size());
    out += levels;
    if (topo_->crossPods != nullptr) {
      std::snprintf(levels, sizeof(levels), " in %d pods of %d", topo_->crossPods->size(),
                    topo_->podLeaves->size());
      out += levels;
    }
    out += "\n";
  }
  out += line;
  for (size_t b = 8; b <= (256u << 20); b *= 4) {
    double t[8];
    int i = 0;
    for (AlgoId a : {AlgoId::kOneshot, AlgoId::kRing, AlgoId::kTree, AlgoId::kHierRing,
                     AlgoId::kHierTree, AlgoId::kHierLeaf, AlgoId::kRd, AlgoId::kRhd})
      t[i++] = allReduceUs(a, b, nullptr);
    AlgoChoice c = pickAllReduce(b);
    std::snprintf(line, sizeof(line),
                  "%12zu %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f  %s (%zu)\n", b,
                  t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], algoName(c.algo), c.chunkBytes);
    out += line;
  }
  return out;
}

}  // namespace weft
