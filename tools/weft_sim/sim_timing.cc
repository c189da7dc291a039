// The two timing modes of weft-sim (see sim_timing.h).
#include "sim_timing.h"

#include <algorithm>
#include <unordered_map>

namespace weft {
namespace sim {
namespace {

// Bytes each link carries over its capacity: the busiest links.
void busiestLinks(const Network& net, const std::vector<Flow>& flows,
                  const std::vector<double>& bytes, SimResult* out) {
  std::vector<double> busy(net.numLinks(), 0);
  std::vector<int> links;
  double lat = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    net.route(flows[i], &links, &lat);
    for (int l : links) busy[l] += bytes[i] / net.capacity(l) * 1e-3;  // GB/s -> us per byte
  }
  out->busiest.clear();
  for (int l = 0; l < net.numLinks(); ++l)
    if (busy[l] > 0) out->busiest.push_back({busy[l], l});
  std::sort(out->busiest.rbegin(), out->busiest.rend());
  if (out->busiest.size() > 5) out->busiest.resize(5);
}

uint64_t flowBytes(const SimFlow& f) {
  uint64_t b = 0;
  for (const SimItem& it : f.items) b += it.bytes;
  return b;
}

// The exact mode's graph: one node per item and one per (rank, phase) end.
class ExactGraph {
 public:
  ExactGraph(const std::vector<RankPlans>& plans, double o) : plans_(plans), o_(o) {}

  bool build(const Network& net, std::vector<Flow>* allFlows, std::vector<double>* allBytes,
             std::string* why) {
    const int n = static_cast<int>(plans_.size());
    size_t nodes = 0;
    for (int r = 0; r < n; ++r) {
      base_.emplace_back();
      phaseNode_.emplace_back();
      for (const SimPhase& ph : plans_[r].phases) {
        base_[r].emplace_back();
        for (const SimFlow& f : ph) {
          base_[r].back().push_back(nodes);
          nodes += f.items.size();
        }
      }
      for (size_t k = 0; k < plans_[r].phases.size(); ++k) phaseNode_[r].push_back(nodes++);
    }
    time_.assign(nodes, -1);
    rate_.resize(n);
    lat_.resize(n);
    match_.resize(n);
    // Per phase: every rank's send flows share the network; rates and latencies.
    size_t phases = 0;
    for (const RankPlans& p : plans_) phases = std::max(phases, p.phases.size());
    for (size_t k = 0; k < phases; ++k) {
      std::vector<Flow> flows;
      std::vector<std::pair<int, int>> owner;
      for (int r = 0; r < n; ++r) {
        if (k >= plans_[r].phases.size()) continue;
        rate_[r].resize(plans_[r].phases.size());
        lat_[r].resize(plans_[r].phases.size());
        rate_[r][k].assign(plans_[r].phases[k].size(), 0);
        lat_[r][k].assign(plans_[r].phases[k].size(), 0);
        for (size_t f = 0; f < plans_[r].phases[k].size(); ++f) {
          const SimFlow& fl = plans_[r].phases[k][f];
          if (!fl.send || fl.items.empty()) continue;
          flows.push_back(Flow{r, fl.peer, fl.stream});
          owner.push_back({r, static_cast<int>(f)});
          allFlows->push_back(flows.back());
          allBytes->push_back(static_cast<double>(flowBytes(fl)));
        }
      }
      std::vector<double> rates = net.fairRates(flows);
      std::vector<int> links;
      for (size_t i = 0; i < flows.size(); ++i) {
        rate_[owner[i].first][k][owner[i].second] = rates[i];
        net.route(flows[i], &links, &lat_[owner[i].first][k][owner[i].second]);
      }
    }
    // Each receive flow's sender: the peer's send flow to us on that stream.
    for (int r = 0; r < n; ++r) {
      match_[r].resize(plans_[r].phases.size());
      for (size_t k = 0; k < plans_[r].phases.size(); ++k) {
        const SimPhase& ph = plans_[r].phases[k];
        match_[r][k].assign(ph.size(), -1);
        for (size_t g = 0; g < ph.size(); ++g) {
          const SimFlow& rf = ph[g];
          if (rf.send || rf.items.empty()) continue;
          const int p = rf.peer;
          if (k >= plans_[p].phases.size()) return fail(r, k, rf, why);
          const SimPhase& theirs = plans_[p].phases[k];
          for (size_t f = 0; f < theirs.size(); ++f)
            if (theirs[f].send && theirs[f].peer == r && theirs[f].stream == rf.stream)
              match_[r][k][g] = static_cast<int>(f);
          if (match_[r][k][g] < 0 || theirs[match_[r][k][g]].items.size() < rf.items.size())
            return fail(r, k, rf, why);
        }
      }
    }
    return true;
  }

  // The end of the last phase of the slowest rank (an explicit stack: chains
  // run to millions of items).
  bool run(double* endUs, std::string* why) {
    const int n = static_cast<int>(plans_.size());
    double end = 0;
    for (int r = 0; r < n; ++r) {
      if (plans_[r].phases.empty()) continue;
      Node last{r, static_cast<int>(plans_[r].phases.size()) - 1, -1, 0};
      if (!solve(last, why)) return false;
      end = std::max(end, time_[index(last)]);
    }
    *endUs = end;
    return true;
  }

 private:
  struct Node {
    int r, k, f;  // f < 0: the end of phase k
    int64_t j;
  };

  bool fail(int r, size_t k, const SimFlow& rf, std::string* why) {
    *why = "rank " + std::to_string(r) + " phase " + std::to_string(k) +
           ": no matching send from rank " + std::to_string(rf.peer) + " on stream " +
           std::to_string(rf.stream);
    return false;
  }
  size_t index(const Node& x) const {
    return x.f < 0 ? phaseNode_[x.r][x.k] : base_[x.r][x.k][x.f] + static_cast<size_t>(x.j);
  }

  // Prerequisites of x into `pre`.
  void prerequisites(const Node& x, std::vector<Node>* pre) const {
    pre->clear();
    if (x.k > 0) pre->push_back(Node{x.r, x.k - 1, -1, 0});
    const SimPhase& ph = plans_[x.r].phases[x.k];
    if (x.f < 0) {
      for (size_t f = 0; f < ph.size(); ++f)
        if (!ph[f].items.empty())
          pre->push_back(
              Node{x.r, x.k, static_cast<int>(f), static_cast<int64_t>(ph[f].items.size()) - 1});
      return;
    }
    const SimItem& it = ph[x.f].items[x.j];
    if (x.j > 0) pre->push_back(Node{x.r, x.k, x.f, x.j - 1});
    if (it.depFlow >= 0) pre->push_back(Node{x.r, x.k, it.depFlow, it.depItem});
    if (it.depFlow2 >= 0) pre->push_back(Node{x.r, x.k, it.depFlow2, it.depItem2});
    if (!ph[x.f].send) pre->push_back(Node{ph[x.f].peer, x.k, match_[x.r][x.k][x.f], x.j});
  }

  double compute(const Node& x, const std::vector<Node>& pre) const {
    double start = 0;
    const SimPhase& ph = plans_[x.r].phases[x.k];
    for (const Node& p : pre) {
      double t = time_[index(p)];
      // The sender's item lands one route latency after it left.
      if (x.f >= 0 && !ph[x.f].send && p.r != x.r) t += lat_[p.r][p.k][p.f];
      start = std::max(start, t);
    }
    if (x.f < 0 || !ph[x.f].send) return start;
    const double rate = rate_[x.r][x.k][x.f];
    return start + o_ + static_cast<double>(ph[x.f].items[x.j].bytes) / rate * 1e-3;
  }

  bool solve(const Node& root, std::string* why) {
    if (time_[index(root)] >= 0) return true;
    std::vector<Node> stack{root}, pre;
    std::vector<char> open(time_.size(), 0);
    while (!stack.empty()) {
      Node x = stack.back();
      const size_t ix = index(x);
      if (time_[ix] >= 0) {
        stack.pop_back();
        continue;
      }
      prerequisites(x, &pre);
      bool ready = true;
      for (const Node& p : pre) {
        if (time_[index(p)] >= 0) continue;
        if (open[index(p)]) {
          *why = "the plans wait on each other in a cycle (rank " + std::to_string(p.r) +
                 ", phase " + std::to_string(p.k) + ")";
          return false;
        }
        ready = false;
        stack.push_back(p);
      }
      if (!ready) {
        open[ix] = 1;
        continue;
      }
      time_[ix] = compute(x, pre);
      open[ix] = 0;
      stack.pop_back();
    }
    return true;
  }

  const std::vector<RankPlans>& plans_;
  double o_;
  std::vector<std::vector<std::vector<size_t>>> base_;  // [r][k][f] first node
  std::vector<std::vector<size_t>> phaseNode_;          // [r][k]
  std::vector<std::vector<std::vector<double>>> rate_, lat_;
  std::vector<std::vector<std::vector<int>>> match_;  // receive flow -> peer's send flow
  std::vector<double> time_;                          // us, -1: not yet known
};

}  // namespace

bool timeExact(const Cluster& c, const Network& net, const std::vector<RankPlans>& plans,
               double perMessageUs, SimResult* out, std::string* why) {
  (void)c;
  ExactGraph g(plans, perMessageUs);
  std::vector<Flow> flows;
  std::vector<double> bytes;
  if (!g.build(net, &flows, &bytes, why) || !g.run(&out->timeUs, why)) return false;
  busiestLinks(net, flows, bytes, out);
  return true;
}

bool timePhase(const Cluster& c, const Network& net, const RankPlans& plan, int rank,
               const std::vector<int>& ring, double perMessageUs, SimResult* out,
               std::string* why) {
  const int n = c.nranks;
  std::vector<int> pos(n);
  for (int p = 0; p < n; ++p) pos[ring[p]] = p;
  double t = 0;
  std::vector<Flow> allFlows;
  std::vector<double> allBytes;
  for (size_t k = 0; k < plan.phases.size(); ++k) {
    const SimPhase& ph = plan.phases[k];
    // Each stream: one send flow, one receive flow (a ring); its shift.
    std::unordered_map<int, int> sendOf;
    std::vector<Flow> flows;
    std::vector<double> bytes;
    for (size_t f = 0; f < ph.size(); ++f) {
      if (!ph[f].send) continue;
      if (sendOf.count(ph[f].stream)) {
        *why = "phase mode models rings (one send flow per stream); use --mode exact";
        return false;
      }
      sendOf[ph[f].stream] = static_cast<int>(f);
      const int shift = (pos[ph[f].peer] - pos[rank] + n) % n;
      const double each = static_cast<double>(flowBytes(ph[f]));
      for (int p = 0; p < n; ++p) {
        flows.push_back(Flow{ring[p], ring[(p + shift) % n], ph[f].stream});
        bytes.push_back(each);
      }
    }
    // A flow's items leave at the pace of the slowest hop (the ring is a
    // pipeline), but one chunk's way around crosses every kind of hop: it
    // pays the mean hop's time and latency.
    std::vector<double> rates = net.fairRates(flows);
    double slowest = 0, meanPerByte = 0, lat = 0;
    std::vector<int> links;
    for (size_t i = 0; i < flows.size(); ++i) {
      double l = 0;
      net.route(flows[i], &links, &l);
      slowest = std::max(slowest, 1e-3 / rates[i]);
      meanPerByte += 1e-3 / rates[i] / static_cast<double>(flows.size());
      lat += l / static_cast<double>(flows.size());
    }
    allFlows.insert(allFlows.end(), flows.begin(), flows.end());
    allBytes.insert(allBytes.end(), bytes.begin(), bytes.end());
    // One rank's items; a receive lands when the upstream rank's send of the
    // same item on that stream (by symmetry, ours) is done, plus the latency.
    std::vector<std::vector<double>> end(ph.size());
    for (size_t f = 0; f < ph.size(); ++f) end[f].assign(ph[f].items.size(), -1);
    auto ready = [&](int f, int64_t j) { return f < 0 ? 0.0 : end[f][j]; };
    std::vector<size_t> next(ph.size(), 0);  // each flow's first item not yet timed
    bool progress = true;
    while (progress) {  // items become ready in plan order; sweep until all are known
      progress = false;
      for (size_t f = 0; f < ph.size(); ++f) {
        const SimFlow& fl = ph[f];
        auto peerSend = sendOf.find(fl.stream);
        if (!fl.send && peerSend == sendOf.end() && !fl.items.empty()) {
          *why = "phase mode models rings (a receive without a send on its stream)";
          return false;
        }
        for (size_t& j = next[f]; j < fl.items.size(); ++j) {
          const SimItem& it = fl.items[j];
          double prev = j > 0 ? end[f][j - 1] : t;
          double d1 = ready(it.depFlow, it.depItem), d2 = ready(it.depFlow2, it.depItem2);
          double up = 0;
          if (!fl.send) {
            const std::vector<double>& theirs = end[peerSend->second];
            up = j < theirs.size() && theirs[j] >= 0 ? theirs[j] + lat : -1;
          }
          if (d1 < 0 || d2 < 0 || up < 0) break;
          double start = std::max({d1, d2, up, t});
          end[f][j] = fl.send ? std::max(prev + perMessageUs + it.bytes * slowest,
                                         start + perMessageUs + it.bytes * meanPerByte)
                              : std::max(prev, start);
          progress = true;
        }
      }
    }
    double phaseEnd = t;
    for (size_t f = 0; f < ph.size(); ++f)
      for (double e : end[f]) {
        if (e < 0) {
          *why = "phase mode could not order this plan's items; use --mode exact";
          return false;
        }
        phaseEnd = std::max(phaseEnd, e);
      }
    t = phaseEnd;
  }
  out->timeUs = t;
  busiestLinks(net, allFlows, allBytes, out);
  return true;
}

}  // namespace sim
}  // namespace weft
