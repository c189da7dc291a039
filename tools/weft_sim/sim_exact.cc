// Exact mode's event loop (see sim_exact.h). Items are numbered globally
// (rank, phase, flow, item); each (rank, phase) also has an end node, which a
// phase's first items wait for. Waiting is counted: an item becomes ready
// when its count of unmet prerequisites reaches zero.
#include "sim_exact.h"

#include <algorithm>
#include <cstdint>
#include <queue>

namespace weft {
namespace sim {
namespace {

struct Event {
  double t;
  int kind;  // 0: prerequisites met, 1: transmission starts, 2: transmission ends
  int64_t node;
  uint64_t version;  // kind 2: stale when the flow's rate changed since
  bool operator>(const Event& o) const { return t > o.t; }
};

class ExactRun {
 public:
  ExactRun(const Network& net, const std::vector<RankPlans>& plans, double o,
           const std::vector<double>& late)
      : net_(net), plans_(plans), o_(o), late_(late) {}

  bool run(double* endUs, std::string* why) {
    if (!layout(why)) return false;
    for (int64_t x = 0; x < nodes_; ++x)
      if (pending_[x] == 0) {
        const int r = flowOf_[x] >= 0 ? flows_[flowOf_[x]].r : -1 - flowOf_[x];
        queue_.push(Event{r < static_cast<int>(late_.size()) ? late_[r] : 0, 0, x, 0});
      }
    int64_t done = 0;
    while (!queue_.empty()) {
      // Every event of one instant, then one new share for each item moving
      // on a link where an item started or stopped: symmetric plans start
      // thousands of items at the same instant, and sharing out a link once
      // per instant instead of once per item gives the same rates.
      const double now = queue_.top().t;
      while (!queue_.empty() && queue_.top().t == now) {
        Event e = queue_.top();
        queue_.pop();
        if (e.kind == 0) {
          ready(e.t, e.node, &done);
        } else if (e.kind == 1) {
          startMoving(e.t, e.node);
        } else if (flows_[flowOf_[e.node]].version == e.version) {
          stopMoving(e.node);
          complete(e.t, e.node, &done);
        }
      }
      shareOutDirtyLinks(now);
    }
    if (done < nodes_) {
      *why = "the plans wait on each other (" + std::to_string(nodes_ - done) +
             " items never became ready)";
      return false;
    }
    double end = 0;
    for (double t : endOf_) end = std::max(end, t);
    *endUs = end;
    return true;
  }

 private:
  struct FlowState {
    int r = 0, k = 0, f = 0;
    bool send = false;
    std::vector<int> route;
    double latency = 0;
    int64_t first = 0;    // node of item 0
    int64_t match = -1;   // receive flows: the sender's first node
    int64_t target = -1;  // send flows: the peer's receive flow's first node
    int64_t targetItems = 0;
    double remaining = 0;  // bytes of the moving item
    double rate = 0;       // GB/s
    double since = 0;      // when `remaining` was last brought up to date
    uint64_t version = 0;
  };

  // Numbers the nodes, finds each receive's sender, counts prerequisites.
  bool layout(std::string* why) {
    const int n = static_cast<int>(plans_.size());
    std::vector<std::vector<std::vector<int>>>& flowId = flowId_;
    flowId.assign(n, {});
    std::vector<std::vector<int64_t>> phaseEnd(n);
    for (int r = 0; r < n; ++r) {
      flowId[r].resize(plans_[r].phases.size());
      for (size_t k = 0; k < plans_[r].phases.size(); ++k)
        for (size_t f = 0; f < plans_[r].phases[k].size(); ++f) {
          const SimFlow& fl = plans_[r].phases[k][f];
          FlowState s;
          s.r = r, s.k = static_cast<int>(k), s.f = static_cast<int>(f), s.send = fl.send;
          s.first = nodes_;
          if (fl.send && !fl.items.empty())
            net_.route(Flow{r, fl.peer, fl.stream}, &s.route, &s.latency);
          flowId[r][k].push_back(static_cast<int>(flows_.size()));
          flows_.push_back(s);
          for (size_t j = 0; j < fl.items.size(); ++j) {
            flowOf_.push_back(static_cast<int>(flows_.size()) - 1);
            item_.push_back(static_cast<int64_t>(j));
          }
          nodes_ += static_cast<int64_t>(fl.items.size());
        }
      for (size_t k = 0; k < plans_[r].phases.size(); ++k) {
        phaseEnd[r].push_back(nodes_++);
        flowOf_.push_back(-1 - r);  // a phase end: the rank, encoded
        item_.push_back(static_cast<int64_t>(k));
      }
    }
    pending_.assign(nodes_, 0);
    time_.assign(nodes_, 0);
    waiters_.assign(nodes_, {});
    endOf_.assign(n, 0);
    auto edge = [&](int64_t from, int64_t to) {
      waiters_[from].push_back(to);
      ++pending_[to];
    };
    for (size_t id = 0; id < flows_.size(); ++id) {
      FlowState& s = flows_[id];
      const SimPhase& ph = plans_[s.r].phases[s.k];
      const SimFlow& fl = ph[s.f];
      if (!fl.send && !fl.items.empty()) {
        const SimPhase* theirs = s.k < static_cast<int>(plans_[fl.peer].phases.size())
                                     ? &plans_[fl.peer].phases[s.k]
                                     : nullptr;
        for (size_t g = 0; theirs != nullptr && g < theirs->size(); ++g)
          if ((*theirs)[g].send && (*theirs)[g].peer == s.r && (*theirs)[g].stream == fl.stream &&
              (*theirs)[g].items.size() >= fl.items.size()) {
            FlowState& sender = flows_[flowId[fl.peer][s.k][g]];
            s.match = sender.first;
            sender.target = s.first;
            sender.targetItems = static_cast<int64_t>(fl.items.size());
          }
        if (s.match < 0) {
          *why = "rank " + std::to_string(s.r) + " phase " + std::to_string(s.k) +
                 ": no matching send from rank " + std::to_string(fl.peer) + " on stream " +
                 std::to_string(fl.stream);
          return false;
        }
      }
      for (size_t j = 0; j < fl.items.size(); ++j) {
        const int64_t x = s.first + static_cast<int64_t>(j);
        const SimItem& it = fl.items[j];
        if (j > 0) edge(x - 1, x);
        if (j == 0 && s.k > 0) edge(phaseEnd[s.r][s.k - 1], x);
        if (it.depFlow >= 0) edge(flows_[flowId[s.r][s.k][it.depFlow]].first + it.depItem, x);
        if (it.depFlow2 >= 0) edge(flows_[flowId[s.r][s.k][it.depFlow2]].first + it.depItem2, x);
        if (!fl.send) ++pending_[x];  // its arrival, counted down by the sender
      }
      if (!fl.items.empty())
        edge(s.first + static_cast<int64_t>(fl.items.size()) - 1, phaseEnd[s.r][s.k]);
    }
    for (int r = 0; r < n; ++r)
      for (size_t k = 1; k < phaseEnd[r].size(); ++k) edge(phaseEnd[r][k - 1], phaseEnd[r][k]);
    moving_.assign(net_.numLinks(), {});
    linkDirty_.assign(net_.numLinks(), 0);
    flowStamp_.assign(flows_.size(), 0);
    current_.assign(flows_.size(), 0);
    return true;
  }

  void ready(double t, int64_t x, int64_t* done) {
    const int fid = flowOf_[x];  // < 0: a phase end
    if (fid >= 0 && flows_[fid].send) {
      queue_.push(Event{t + o_, 1, x, 0});
      return;
    }
    complete(t, x, done);
  }

  void complete(double t, int64_t x, int64_t* done) {
    time_[x] = t;
    ++*done;
    const int fid = flowOf_[x];
    if (fid < 0) endOf_[-1 - fid] = std::max(endOf_[-1 - fid], t);
    for (int64_t w : waiters_[x])
      if (--pending_[w] == 0) queue_.push(Event{t, 0, w, 0});
    if (fid < 0 || !flows_[fid].send) return;
    // The peer's receive item of the same index lands one latency later.
    const FlowState& s = flows_[fid];
    const int64_t j = item_[x];
    if (s.target < 0 || j >= s.targetItems) return;
    const int64_t y = s.target + j;
    if (--pending_[y] == 0) queue_.push(Event{t + s.latency, 0, y, 0});
  }

  // Bytes moved so far at the old rate, then the rate the links give now.
  void refresh(double t, int fid) {
    FlowState& s = flows_[fid];
    s.remaining = std::max(0.0, s.remaining - s.rate * 1e3 * (t - s.since));
    s.since = t;
    double rate = 1e300;
    for (int l : s.route)
      rate = std::min(rate, net_.capacity(l) / static_cast<double>(moving_[l].size()));
    s.rate = rate;
    ++s.version;
    queue_.push(Event{t + s.remaining / (rate * 1e3), 2, s.first + current_[fid], s.version});
  }

  void startMoving(double t, int64_t x) {
    const int fid = flowOf_[x];
    FlowState& s = flows_[fid];
    current_[fid] = item_[x];
    s.remaining = static_cast<double>(plans_[s.r].phases[s.k][s.f].items[item_[x]].bytes);
    s.rate = 0;
    s.since = t;
    for (int l : s.route) moving_[l].push_back(fid);
    if (s.route.empty()) {  // nothing to cross (should not happen): done at once
      ++s.version;
      queue_.push(Event{t, 2, x, s.version});
      return;
    }
    markDirty(fid);
  }

  void stopMoving(int64_t x) {
    const int fid = flowOf_[x];
    FlowState& s = flows_[fid];
    for (int l : s.route) {
      std::vector<int>& m = moving_[l];
      m.erase(std::find(m.begin(), m.end(), fid));
    }
    s.rate = 0;
    ++s.version;  // no more end events for this item
    markDirty(fid);
  }

  void markDirty(int fid) {
    for (int l : flows_[fid].route)
      if (!linkDirty_[l]) {
        linkDirty_[l] = 1;
        dirty_.push_back(l);
      }
  }

  // Every item moving on a link marked since the last instant gets its new
  // share, once however many of its links were marked.
  void shareOutDirtyLinks(double t) {
    ++stamp_;
    for (int l : dirty_) {
      linkDirty_[l] = 0;
      for (int other : moving_[l])
        if (flowStamp_[other] != stamp_) {
          flowStamp_[other] = stamp_;
          refresh(t, other);
        }
    }
    dirty_.clear();
  }

  const Network& net_;
  const std::vector<RankPlans>& plans_;
  double o_;
  const std::vector<double>& late_;
  int64_t nodes_ = 0;
  std::vector<FlowState> flows_;
  std::vector<int> flowOf_;    // [node] -> flow; -1 - rank for a phase end
  std::vector<int64_t> item_;  // [node] -> item index (phase index for phase ends)
  std::vector<std::vector<std::vector<int>>> flowId_;  // [rank][phase][flow] -> flow
  std::vector<int> pending_;
  std::vector<double> time_, endOf_;
  std::vector<std::vector<int64_t>> waiters_;
  std::vector<std::vector<int>> moving_;  // [link] -> flows moving an item on it
  std::vector<int64_t> current_;          // [flow] -> the item it moves
  std::vector<char> linkDirty_;           // [link] -> in dirty_
  std::vector<int> dirty_;                // links whose movers changed at this instant
  std::vector<uint64_t> flowStamp_;       // [flow] -> the last instant it was given a share
  uint64_t stamp_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
};

}  // namespace

bool runExact(const Network& net, const std::vector<RankPlans>& plans, double perMessageUs,
              const std::vector<double>& lateUs, double* endUs, std::string* why) {
  ExactRun run(net, plans, perMessageUs, lateUs);
  return run.run(endUs, why);
}

}  // namespace sim
}  // namespace weft
