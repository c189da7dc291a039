// weft-sim: what weft would do on a cluster you do not have. It builds each
// rank's plans with weft's own code (sim_record.h) for a cluster of ranks on
// nodes under a fabric (the WEFT_FABRIC JSON, or a synthetic leaf/pod
// fabric), and times them on a model of that fabric (sim_timing.h). Prints,
// per size and algorithm, the predicted time, algbw and busbw (as the perf
// tools count them), the tuner's own prediction and its pick, then the
// busiest links; --json writes records weft-plot reads. docs/scale.md has
// the model, its error between modes and against the emulated fabric.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/config.h"
#include "collectives/tuner.h"
#include "sim_network.h"
#include "sim_record.h"
#include "sim_timing.h"

namespace {

using namespace weft;
using namespace weft::sim;

const char kUsage[] =
    "usage: weft-sim -n RANKS [--ppn P] [--op allreduce|allgather|alltoall] [-b MIN] [-e MAX]\n"
    "         [-f F] [--algo auto|all|ring|tree|hier|hier-tree|hier-leaf|rd|rhd|direct]\n"
    "         [--mode exact|phase]\n"
    "         [--fabric FILE | --leaves L --nodes-per-leaf K [--leaves-per-pod M]\n"
    "          [--node-gbit G] [--oversub X] [--pod-oversub Y] [--rails R]]\n"
    "         [--leaf-placement fill|cyclic]\n"
    "         [--fabric-blind] [--spines S] [--intra-gbps B] [--intra-us U] [--message-us O]\n"
    "         [--slow-node NODE:FACTOR] [--straggler RANK:US] [--efficiency E] [--json FILE]\n"
    "  Sizes as the perf tools count them (allgather: the gathered total; alltoall: each\n"
    "  rank's whole buffer). alltoall: direct, or hier (through the node).\n";

struct Options {
  int ranks = 0, ppn = 1;
  bool allReduce = true, allToAll = false;
  size_t minBytes = 1 << 20, maxBytes = 1 << 20;
  int factor = 2;
  std::string algo = "auto", mode = "exact", fabricFile, json;
  int leaves = 1, nodesPerLeaf = 0, leavesPerPod = 0, spines = 1, rails = 1;
  double nodeGbit = 400, oversub = 1, podOversub = 1, intraGBps = 150, intraUs = 1;
  double messageUs = Tuner::kPerMessageUs;
  double efficiency = 1;
  bool cyclic = false, blind = false;
  std::vector<std::pair<int, double>> slowNodes, stragglers;
};

// A size as the knobs take it (base/config.h: 64K, 1M, 2G).
bool parseBytes(const char* s, size_t* out) {
  int64_t v = 0;
  if (!parseSize(s, &v) || v < 0) return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc && a != "--fabric-blind") return false;
    const char* v = a == "--fabric-blind" ? "" : argv[++i];
    if (a == "-n")
      o->ranks = std::atoi(v);
    else if (a == "--ppn")
      o->ppn = std::atoi(v);
    else if (a == "--op") {
      const std::string op = v;
      if (op != "allreduce" && op != "allgather" && op != "alltoall") return false;
      o->allReduce = op == "allreduce";
      o->allToAll = op == "alltoall";
    } else if (a == "-b") {
      if (!parseBytes(v, &o->minBytes)) return false;
    } else if (a == "-e") {
      if (!parseBytes(v, &o->maxBytes)) return false;
    } else if (a == "-f")
      o->factor = std::atoi(v);
    else if (a == "--algo")
      o->algo = v;
    else if (a == "--mode")
      o->mode = v;
    else if (a == "--fabric")
      o->fabricFile = v;
    else if (a == "--leaves")
      o->leaves = std::atoi(v);
    else if (a == "--nodes-per-leaf")
      o->nodesPerLeaf = std::atoi(v);
    else if (a == "--leaves-per-pod")
      o->leavesPerPod = std::atoi(v);
    else if (a == "--node-gbit")
      o->nodeGbit = std::atof(v);
    else if (a == "--oversub")
      o->oversub = std::atof(v);
    else if (a == "--pod-oversub")
      o->podOversub = std::atof(v);
    else if (a == "--rails")
      o->rails = std::atoi(v);
    else if (a == "--leaf-placement")
      o->cyclic = std::strcmp(v, "cyclic") == 0;
    else if (a == "--fabric-blind")
      o->blind = true;
    else if (a == "--spines")
      o->spines = std::atoi(v);
    else if (a == "--intra-gbps")
      o->intraGBps = std::atof(v);
    else if (a == "--intra-us")
      o->intraUs = std::atof(v);
    else if (a == "--message-us")
      o->messageUs = std::atof(v);
    else if (a == "--efficiency")
      o->efficiency = std::atof(v);
    else if (a == "--json")
      o->json = v;
    else if (a == "--slow-node") {
      int node = 0;
      double f = 1;
      if (std::sscanf(v, "%d:%lf", &node, &f) != 2 || f <= 0) return false;
      o->slowNodes.push_back({node, f});
    } else if (a == "--straggler") {
      int rank = 0;
      double us = 0;
      if (std::sscanf(v, "%d:%lf", &rank, &us) != 2 || us < 0) return false;
      o->stragglers.push_back({rank, us});
    } else {
      return false;
    }
  }
  return o->ranks >= 2 && o->ppn >= 1 && o->ranks % o->ppn == 0 && o->factor >= 2 &&
         o->minBytes >= 4 && o->maxBytes >= o->minBytes && o->oversub > 0 && o->podOversub > 0 &&
         o->rails >= 1 && o->rails <= 64 && o->spines >= 1 && o->efficiency > 0 &&
         o->efficiency <= 1 && (o->mode == "exact" || o->mode == "phase");
}

std::vector<AlgoId> algosOf(const Options& o, std::string* why) {
  const std::vector<std::pair<const char*, AlgoId>> names = {{"ring", AlgoId::kRing},
                                                             {"tree", AlgoId::kTree},
                                                             {"hier", AlgoId::kHierRing},
                                                             {"hier-tree", AlgoId::kHierTree},
                                                             {"hier-leaf", AlgoId::kHierLeaf},
                                                             {"rd", AlgoId::kRd},
                                                             {"rhd", AlgoId::kRhd},
                                                             {"direct", AlgoId::kDirect}};
  if (o.algo == "auto") return {AlgoId::kAuto};
  std::vector<AlgoId> out;
  if (o.allToAll) {
    for (const auto& n : names)
      if ((n.second == AlgoId::kDirect || n.second == AlgoId::kHierRing) &&
          (o.algo == "all" || o.algo == n.first))
        out.push_back(n.second);
    if (out.empty()) *why = "--algo " + o.algo + ": alltoall runs direct or hier";
    return out;
  }
  for (const auto& n : names) {
    bool forAllReduce = n.second != AlgoId::kDirect;
    bool forAllGather =
        n.second == AlgoId::kRing || n.second == AlgoId::kHierRing || n.second == AlgoId::kDirect;
    if (o.algo == "all" ? (o.allReduce ? forAllReduce : forAllGather) : o.algo == n.first)
      out.push_back(n.second);
  }
  if (out.empty()) *why = "--algo " + o.algo + ": not a modelled algorithm of this collective";
  return out;
}

bool makeCluster(const Options& o, Cluster* c, std::string* why) {
  c->nranks = o.ranks;
  c->ppn = o.ppn;
  c->intraGBps = o.intraGBps;
  c->intraHopUs = o.intraUs;
  c->spines = o.spines;
  c->blind = o.blind;
  c->efficiency = o.efficiency;
  const int nodes = c->nnodes();
  if (!o.fabricFile.empty()) {
    if (topo::loadFabric(o.fabricFile, &c->fabric) != weftSuccess) {
      *why = "cannot use --fabric " + o.fabricFile;
      return false;
    }
  } else {
    int perLeaf = o.nodesPerLeaf > 0 ? o.nodesPerLeaf : (nodes + o.leaves - 1) / o.leaves;
    if (perLeaf * o.leaves < nodes) {
      *why = "--leaves x --nodes-per-leaf holds fewer nodes than the ranks need";
      return false;
    }
    c->fabric = syntheticFabric(o.leaves, perLeaf, o.leavesPerPod, o.nodeGbit, o.oversub,
                                o.podOversub, o.rails);
  }
  c->leafOfNode = placeNodes(c->fabric, nodes, o.cyclic);
  c->nodeSlowdown.assign(nodes, 1);
  for (const auto& s : o.slowNodes)
    if (s.first >= 0 && s.first < nodes) c->nodeSlowdown[s.first] = s.second;
  if (!o.stragglers.empty() && o.mode != "exact") {
    *why = "--straggler needs --mode exact (phase mode takes every rank to be alike)";
    return false;
  }
  c->lateUs.assign(o.ranks, 0);
  for (const auto& s : o.stragglers)
    if (s.first >= 0 && s.first < o.ranks) c->lateUs[s.first] = s.second;
  return true;
}

double busFactor(bool allReduce, int n) { return allReduce ? 2.0 * (n - 1) / n : (n - 1.0) / n; }

const char* opName(const Options& o) {
  return o.allToAll ? "alltoall" : o.allReduce ? "allreduce" : "allgather";
}

// One algorithm at one size, both modes: false with *why when it cannot be simulated.
bool simulateOne(const Options& o, const Cluster& c, const Network& net,
                 const std::vector<int>& ring, const SimCall& call, const AlgoChoice& choice,
                 SimResult* res, std::string* why) {
  if (o.mode == "phase") {
    if (call.allToAll) return *why = "phase mode models the flat ring only", false;
    RankPlans plan;
    return recordRank(c, call, choice, ring[0], &plan, why) &&
           timePhase(c, net, plan, ring[0], ring, o.messageUs, res, why);
  }
  std::vector<RankPlans> plans(c.nranks);
  for (int r = 0; r < c.nranks; ++r)
    if (!recordRank(c, call, choice, r, &plans[r], why)) return false;
  return timeExact(c, net, plans, o.messageUs, res, why);
}

// The JSON record weft-plot reads (a list of these).
std::string record(const Options& o, const Cluster& c, size_t size, const AlgoChoice& choice,
                   const SimResult& res, double algbw, double busbw, bool picked, double wall) {
  char rec[512];
  std::snprintf(rec, sizeof(rec),
                "\n {\"tool\": \"weft-sim\", \"label\": \"sim:%s\", \"collective\": \"%s\", "
                "\"nranks\": %d, \"mode\": \"%s\", \"size\": %zu, \"time_us\": %.3f, "
                "\"algbw\": %.6f, \"busbw\": %.6f, \"tuner_us\": %.3f, \"pick\": %s, "
                "\"sim_seconds\": %.3f}",
                algoName(choice.algo), opName(o), c.nranks, o.mode.c_str(), size, res.timeUs, algbw,
                busbw, choice.predictedUs, picked ? "true" : "false", wall);
  return rec;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parseArgs(argc, argv, &o)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string why;
  Cluster c;
  std::vector<AlgoId> algos = algosOf(o, &why);
  if (algos.empty() || !makeCluster(o, &c, &why)) {
    std::fprintf(stderr, "weft-sim: %s\n", why.c_str());
    return 2;
  }
  Network net(c);
  const std::vector<int> ring = ringOrder(c);
  std::printf("# weft-sim: %d ranks, %d per node, %d nodes; %s%s; %s mode; %s\n", c.nranks, c.ppn,
              c.nnodes(), c.fabric.summary().c_str(), c.blind ? " (placement blind to it)" : "",
              o.mode.c_str(), opName(o));
  std::printf("%12s %10s %12s %10s %10s %12s %s\n", "size", "algo", "time(us)", "algbw", "busbw",
              "tuner(us)", "pick");
  std::string records;
  SimResult lastPick;
  for (size_t size = o.minBytes; size <= o.maxBytes; size *= o.factor) {
    SimCall call;
    call.allReduce = o.allReduce;
    call.allToAll = o.allToAll;
    call.bytesPerRank = o.allReduce ? size : size / c.nranks;  // alltoall: a block per peer
    call.bytesPerRank -= call.bytesPerRank % 4;
    AlgoChoice pick;
    SimResult sizePick;  // this size's busiest links: the pick's, else the first simulated
    if (!chooseAlgo(c, call, &pick, &why))
      return std::fprintf(stderr, "weft-sim: %s\n", why.c_str()), 1;
    for (AlgoId algo : algos) {
      call.forced = algo;
      AlgoChoice choice;
      SimResult res;
      auto t0 = std::chrono::steady_clock::now();
      if (!chooseAlgo(c, call, &choice, &why) ||
          !simulateOne(o, c, net, ring, call, choice, &res, &why)) {
        std::printf("%12zu %10s %12s   (%s)\n", size, algoName(algo), "-", why.c_str());
        continue;
      }
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double algbw = size / res.timeUs * 1e-3;  // GB/s
      const double busbw = algbw * busFactor(o.allReduce, c.nranks);
      const bool picked = choice.algo == pick.algo;
      if (picked || sizePick.busiest.empty()) sizePick = res;
      char tuner[32] = "-";  // all-to-all has no model: the table's rule picks
      if (choice.predictedUs >= 0) std::snprintf(tuner, sizeof(tuner), "%.1f", choice.predictedUs);
      std::printf("%12zu %10s %12.1f %10.3f %10.3f %12s %s  [%.2f s]\n", size,
                  algoName(choice.algo), res.timeUs, algbw, busbw, tuner, picked ? "*" : "", wall);
      records += (records.empty() ? "" : ",") +
                 record(o, c, size, choice, res, algbw, busbw, picked, wall);
    }
    lastPick = sizePick;
  }
  std::printf(
      "# busiest links at the largest size, of the tuner's pick where simulated (us busy):");
  for (const auto& b : lastPick.busiest)
    std::printf(" %s %.1f", net.name(b.second).c_str(), b.first);
  std::printf("\n");
  if (!o.json.empty()) {
    FILE* f = std::fopen(o.json.c_str(), "w");
    if (f == nullptr) return std::fprintf(stderr, "weft-sim: cannot write %s\n", o.json.c_str()), 1;
    std::fprintf(f, "[%s\n]\n", records.c_str());
    std::fclose(f);
  }
  return 0;
}
