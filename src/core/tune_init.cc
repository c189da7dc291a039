// Topology and tuner setup at communicator init: every rank's node identity
// (gathered once at init, topo/rank_place.h) gives the nodes, views and trees (CommTopo); the
// links inside and between nodes are declared (WEFT_TUNE_SHM / WEFT_TUNE_NET)
// or measured by rank 0 with one peer on its node and one on the next node;
// a second allgather hands rank 0's figures to everyone, so that every rank
// runs the same model and picks the same algorithm.
#include <cstdio>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "collectives/link_probe.h"
#include "core/comm.h"
#include "core/tune_init.h"

namespace weft {
namespace {

// "LATENCY_US,GBPS" -> *out; false when unset.
weftResult_t declaredLink(const char* name, bool* declared, LinkModel* out) {
  *declared = configIsSet(name) && !configString(name).empty();
  if (!*declared) return weftSuccess;
  std::string text = configString(name);
  double us = 0, gbps = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lf,%lf%c", &us, &gbps, &extra) != 2 || us < 0 || gbps <= 0)
    return setError(weftInvalidArgument, "%s=%s: expected LATENCY_US,GBPS (e.g. 200,0.125)", name,
                    text.c_str());
  out->alphaUs = us;
  out->gbps = gbps;
  return weftSuccess;
}

}  // namespace

weftResult_t setupTopoAndTuner(weftComm* c) {
  // Each rank's node, and where its GPU (WEFT_RANK_GPU) sits in the
  // topology's ring order: the ring view keeps GPUs that share a switch next
  // to each other.
  const std::vector<RankPlace>& places = c->places;  // gathered at init (topo/rank_place.h)
  std::vector<uint64_t> hashes(c->nranks);
  std::vector<int> ringKeys(c->nranks), leafOf(c->nranks);
  for (int r = 0; r < c->nranks; ++r) {
    hashes[r] = places[r].node;
    ringKeys[r] = static_cast<int>(places[r].ringKey);
    leafOf[r] = static_cast<int>(places[r].fabricLeaf);
  }
  // gatherRankPlaces checked that every rank has a leaf when the fabric is set.
  c->topo.build(c->rank, hashes, c->channels.get(), ringKeys, &c->fabric,
                c->fabric.empty() ? std::vector<int>() : leafOf);
  if (c->rank == 0) {
    std::string order;
    for (int i = 0; i < c->topo.ring->size(); ++i)
      order += (i > 0 ? " " : "") + std::to_string(c->topo.ring->member(i));
    WEFT_INFO(INIT, "ring order: %s", order.c_str());
  }
  const CommTopo& t = c->topo;

  // Defaults for links nobody can measure: shared memory and a 10 Gbit/s LAN.
  LinkModel models[2];  // [0] intra, [1] inter
  models[0] = LinkModel{2.0, 4.0};
  models[1] = LinkModel{30.0, 1.25};
  bool declared[2];
  WEFT_CHECK(declaredLink("WEFT_TUNE_SHM", &declared[0], &models[0]));
  WEFT_CHECK(declaredLink("WEFT_TUNE_NET", &declared[1], &models[1]));
  // Rank 0 measures, in this order, with the second rank of its node and with
  // the first rank of the next node in ring order; those peers answer.
  const std::vector<int>& home = t.nodeRanks[t.nodeOf[0]];
  int peers[2] = {home.size() > 1 ? home[1] : -1,
                  t.nnodes > 1 ? t.nodeRanks[(t.nodeOf[0] + 1) % t.nnodes][0] : -1};
  for (int k = 0; k < 2; ++k) {
    if (declared[k] || peers[k] < 0) continue;
    if (c->rank == 0 || c->rank == peers[k]) {
      int peer = c->rank == 0 ? peers[k] : 0;
      WEFT_CHECK(probeLink(c->ctx, peer, c->rank == 0, &models[k]));
    }
  }
  if (c->nranks > 1) {
    std::vector<LinkModel> all(2 * c->nranks);
    all[2 * c->rank] = models[0];
    all[2 * c->rank + 1] = models[1];
    WEFT_CHECK(c->bootstrap->allgather(all.data(), 2 * sizeof(LinkModel)));
    models[0] = all[0];
    models[1] = all[1];
  }
  c->tuner.setup(&c->topo, models[0], models[1], c->config.chunkBytes, c->config.nstreams,
                 c->stagingBytes);
  WEFT_INFO(TUNING, "rank %d: node %d of %d, local rank %d of %d%s", c->rank, t.node, t.nnodes,
            t.localIndex, t.localRanks, t.uniform ? "" : " (nodes differ in size)");
  if (c->rank == 0 && t.nnodes > 1) {
    if (!c->fabric.empty()) WEFT_INFO(TUNING, "WEFT_FABRIC: %s", c->fabric.summary().c_str());
    WEFT_INFO(TUNING, "%s", t.fabric.describe().c_str());
  }
  if (c->rank == 0 && logEnabled(LogLevel::kInfo, kLogTUNING)) {
    std::string table = c->tuner.table();
    size_t pos = 0;
    while (pos < table.size()) {
      size_t nl = table.find('\n', pos);
      WEFT_INFO(TUNING, "%s", table.substr(pos, nl - pos).c_str());
      pos = nl == std::string::npos ? table.size() : nl + 1;
    }
  }
  return weftSuccess;
}

}  // namespace weft
