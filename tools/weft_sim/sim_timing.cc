// The two timing modes of weft-sim (see sim_timing.h).
#include "sim_timing.h"

#include "sim_exact.h"

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

}  // namespace

bool timeExact(const Cluster& c, const Network& net, const std::vector<RankPlans>& plans,
               double perMessageUs, SimResult* out, std::string* why) {
  if (!runExact(net, plans, perMessageUs, c.lateUs, &out->timeUs, why)) return false;
  std::vector<Flow> flows;
  std::vector<double> bytes;
  for (int r = 0; r < static_cast<int>(plans.size()); ++r)
    for (const SimPhase& ph : plans[r].phases)
      for (const SimFlow& f : ph)
        if (f.send && !f.items.empty()) {
          flows.push_back(Flow{r, f.peer, f.stream});
          bytes.push_back(static_cast<double>(flowBytes(f)));
        }
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
      if (!ph[f].send || ph[f].items.empty()) continue;
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
