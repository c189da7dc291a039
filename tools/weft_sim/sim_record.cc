// Recording every rank's plans with weft's own code (see sim_record.h).
#include "sim_record.h"

#include <sys/mman.h>

#include <memory>
#include <unordered_map>

#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"
#include "collectives/hier.h"
#include "collectives/modelled_run.h"

namespace weft {
namespace sim {
namespace {

constexpr size_t kMaxChunk = 512 << 10;  // WEFT_CHUNK's default: the tuner's ceiling
constexpr int kStreams = 1;              // WEFT_SOCKET_NSTREAMS's default

// A channel that only knows its peer: the recorder reads it, nothing moves.
class SimChannel : public Channel {
 public:
  SimChannel(int peer, int stream, bool send)
      : peer_(peer), stream_(stream), send_(send), name_("rank " + std::to_string(peer)) {}
  weftResult_t trySend(const void*, size_t, size_t*) override { return weftInternalError; }
  weftResult_t tryRecv(void*, size_t, size_t*) override { return weftInternalError; }
  weftResult_t tryPeek(void*, size_t, size_t*) override { return weftInternalError; }
  ChannelWake wake() const override { return {}; }
  const std::string& peerName() const override { return name_; }
  int peer() const { return peer_; }
  int stream() const { return stream_; }

 private:
  int peer_, stream_;
  bool send_;
  std::string name_;
};

class SimChannelTable : public ChannelTable {
 public:
  explicit SimChannelTable(int streams) : streams_(streams) {}
  Channel* sendChannel(int peer, int stream) override { return get(peer, stream, true); }
  Channel* recvChannel(int peer, int stream) override { return get(peer, stream, false); }
  int nstreams() const override { return streams_; }

 private:
  Channel* get(int peer, int stream, bool send) {
    int64_t key = (static_cast<int64_t>(peer) * streams_ + stream) * 2 + (send ? 1 : 0);
    auto& slot = channels_[key];
    if (!slot) slot = std::make_unique<SimChannel>(peer, stream, send);
    return slot.get();
  }
  int streams_;
  std::unordered_map<int64_t, std::unique_ptr<SimChannel>> channels_;
};

class PlanRecorder : public FlowRecorder {
 public:
  explicit PlanRecorder(RankPlans* out) : out_(out) {}
  weftResult_t record(const FlowPlan& plan) override {
    SimPhase phase(plan.numFlows());
    for (int f = 0; f < plan.numFlows(); ++f) {
      SimFlow& flow = phase[f];
      flow.send = plan.isSend(f);
      const int64_t n = plan.numItems(f);
      if (n == 0) continue;  // as the engine, ask a channel only of flows that move items
      const auto* ch = static_cast<const SimChannel*>(plan.channel(f));
      flow.peer = ch->peer();
      flow.stream = ch->stream();
      flow.items.resize(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) {
        FlowItem it = plan.item(f, k);
        flow.items[k] = SimItem{it.bytes, it.depFlow, it.depFlow2, it.depItem, it.depItem2};
      }
    }
    out_->phases.push_back(std::move(phase));
    return weftSuccess;
  }

 private:
  RankPlans* out_;
};

// Untouched address space for the simulated buffers (and staging).
class Reserved {
 public:
  explicit Reserved(size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Reserved() {
    if (base_ != nullptr) munmap(base_, bytes_);
  }
  char* get() const { return base_; }

 private:
  size_t bytes_;
  char* base_;
};

void buildTopo(const Cluster& c, int rank, ChannelTable* table, CommTopo* topo) {
  std::vector<uint64_t> hashes(c.nranks);
  std::vector<int> leafOf(c.nranks);
  for (int r = 0; r < c.nranks; ++r) {
    hashes[r] = static_cast<uint64_t>(c.nodeOf(r)) + 1;
    leafOf[r] = c.leafOfNode[c.nodeOf(r)];
  }
  if (c.blind)
    topo->build(rank, hashes, table);
  else
    topo->build(rank, hashes, table, {}, &c.fabric, leafOf);
}

}  // namespace

void clusterLinks(const Cluster& c, LinkModel* intra, LinkModel* inter) {
  *intra = LinkModel{c.intraHopUs, c.intraGBps};
  *inter = LinkModel{c.fabric.leafHopUs, c.fabric.nodeGbit / 8 * c.efficiency};
}

bool chooseAlgo(const Cluster& c, const SimCall& call, AlgoChoice* choice, std::string* why) {
  SimChannelTable table(kStreams);
  CommTopo topo;
  buildTopo(c, 0, &table, &topo);
  if (call.allToAll) {  // no model: the selection table's rule, or the forced form
    const AlgoId id = call.forced != AlgoId::kAuto  ? call.forced
                      : hierAllToAllPreferred(topo) ? AlgoId::kHierRing
                                                    : AlgoId::kDirect;
    if (id == AlgoId::kHierRing && !hierUsable(topo)) {
      *why = "hier does not apply to this cluster (one rank per node, or nodes unequal)";
      return false;
    }
    *choice = AlgoChoice{id, 0, 1, -1};
    return true;
  }
  LinkModel intra, inter;
  clusterLinks(c, &intra, &inter);
  Tuner tuner;
  tuner.setup(&topo, intra, inter, kMaxChunk, kStreams, 0);
  const size_t b = call.bytesPerRank;
  if (call.forced == AlgoId::kAuto) {
    *choice = call.allReduce ? tuner.pickAllReduce(b) : tuner.pickAllGather(b);
  } else {
    size_t chunk = 0;
    double t = call.allReduce ? tuner.allReduceUs(call.forced, b, &chunk)
                              : tuner.allGatherUs(call.forced, b, &chunk);
    if (!(t < 1e300)) {
      *why = std::string(algoName(call.forced)) + " does not apply to this cluster and call";
      return false;
    }
    *choice = AlgoChoice{call.forced, chunk, 1, t};
  }
  if (call.streams > 0) choice->streams = call.streams;
  return true;
}

bool recordRank(const Cluster& c, const SimCall& call, const AlgoChoice& choice, int rank,
                RankPlans* out, std::string* why) {
  const int streams = std::max(kStreams, choice.streams);
  SimChannelTable table(streams);
  CommTopo topo;
  buildTopo(c, rank, &table, &topo);
  const size_t count = call.bytesPerRank / 4;
  const size_t total = call.bytesPerRank * (call.allReduce ? 1 : c.nranks);  // per rank
  static Scratch scratch;  // rd keeps partial sums here (touched once, as in weft)
  Reserved buffer(total + 4096), staging(64 << 20);
  if (buffer.get() == nullptr || staging.get() == nullptr) {
    *why = "cannot reserve address space for the simulated buffers";
    return false;
  }
  CollContext ctx;
  ctx.rank = rank;
  ctx.nranks = c.nranks;
  ctx.channels = &table;
  ctx.staging = staging.get();
  ctx.stagingBytes = 64 << 20;
  ctx.slotBytes = kMaxChunk + 64;
  ctx.scratch = &scratch;
  PlanRecorder recorder(out);
  ctx.run.recorder = &recorder;
  CollArgs a;
  a.count = count;
  a.datatype = weftFloat32;
  a.op = weftSum;
  a.recvbuff = buffer.get();
  a.sendbuff = call.allReduce ? buffer.get() : buffer.get() + rank * call.bytesPerRank;
  out->phases.clear();
  weftResult_t r;
  if (call.allToAll) {
    a.sendbuff = buffer.get();
    r = choice.algo == AlgoId::kHierRing ? hierAllToAll(ctx, topo, a) : directAllToAll(ctx, a);
  } else {
    r = runModelled(ctx, topo, call.allReduce, a, choice);
  }
  if (r != weftSuccess) {
    *why = std::string("recording rank ") + std::to_string(rank) + "'s plan failed";
    return false;
  }
  return true;
}

std::vector<int> ringOrder(const Cluster& c) {
  SimChannelTable table(kStreams);
  CommTopo topo;
  buildTopo(c, 0, &table, &topo);
  std::vector<int> out;
  for (int i = 0; i < topo.ring->size(); ++i) out.push_back(topo.ring->member(i));
  return out;
}

}  // namespace sim
}  // namespace weft
