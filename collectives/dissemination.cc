// Radix-R dissemination and the barrier made of it (see dissemination.h).
#include "collectives/dissemination.h"

#include <algorithm>
#include <cstdint>

#include "base/call_header.h"
#include "collectives/header_plan.h"

namespace weft {

std::vector<std::vector<int>> disseminationSchedule(int nranks, int radix) {
  // Offset d < n has base-R digits d_k with d_k * R^k <= d < n, each an
  // offset of step k: so the steps pass every rank's news to every other.
  std::vector<std::vector<int>> steps;
  const int64_t r = std::max(2, radix);
  for (int64_t stride = 1; stride < nranks; stride *= r) {
    steps.emplace_back();
    for (int64_t j = 1; j < r && j * stride < nranks; ++j)
      steps.back().push_back(static_cast<int>(j * stride));
  }
  return steps;
}

const std::vector<std::vector<int>>& cachedDisseminationSchedule(int nranks, int radix) {
  thread_local int cachedN = -1, cachedRadix = -1;
  thread_local std::vector<std::vector<int>> schedule;
  if (nranks != cachedN || radix != cachedRadix) {
    schedule = disseminationSchedule(nranks, radix);
    cachedN = nranks;
    cachedRadix = radix;
  }
  return schedule;
}

namespace {

// Flows 2i and 2i + 1 send to and receive from the i-th offset of the
// schedule (steps in order). A step's sends wait for the last receive of the
// step before; each receive but a step's first waits for the one before it in
// its step, so that last one done means the whole step arrived.
class BarrierPlan : public FlowPlan {
 public:
  BarrierPlan(CollContext& ctx, const std::vector<std::vector<int>>& steps) : ctx_(ctx) {
    for (size_t k = 0; k < steps.size(); ++k)
      for (size_t i = 0; i < steps[k].size(); ++i)
        offsets_.push_back(Offset{steps[k][i], static_cast<int>(k), i == 0});
    for (size_t i = 0; i < offsets_.size(); ++i) {
      const bool lastOfStep = i + 1 == offsets_.size() || offsets_[i + 1].step != offsets_[i].step;
      if (lastOfStep) lastRecv_.push_back(2 * static_cast<int>(i) + 1);
    }
  }
  int numFlows() const override { return 2 * static_cast<int>(offsets_.size()); }
  bool isSend(int f) const override { return f % 2 == 0; }
  Channel* channel(int f) const override {
    const int n = ctx_.nranks, d = offsets_[f / 2].distance;
    return isSend(f) ? ctx_.channels->sendChannel((ctx_.rank + d) % n, 0)
                     : ctx_.channels->recvChannel((ctx_.rank - d + n) % n, 0);
  }
  int64_t numItems(int) const override { return 1; }
  FlowItem item(int f, int64_t) const override {
    static const char arrived = 1;
    const Offset& o = offsets_[f / 2];
    FlowItem it;
    it.bytes = 1;
    if (isSend(f)) {
      it.data = const_cast<char*>(&arrived);
      if (o.step > 0) it.waitFor(lastRecv_[o.step - 1], 0);
    } else {
      it.data = ctx_.staging;  // the byte says nothing; its arrival does
      if (!o.firstOfStep) it.waitFor(f - 2, 0);
    }
    return it;
  }

 private:
  struct Offset {
    int distance;
    int step;
    bool firstOfStep;
  };
  CollContext& ctx_;
  std::vector<Offset> offsets_;
  std::vector<int> lastRecv_;  // [step]: its last receive flow
};

}  // namespace

weftResult_t disseminationBarrier(CollContext& ctx) {
  if (ctx.nranks < 2) return weftSuccess;
  if (ctx.run.check != nullptr && ctx.run.check->pending) return exchangeCallHeader(ctx.run);
  BarrierPlan plan(ctx, cachedDisseminationSchedule(ctx.nranks, kBarrierRadix));
  return runFlows(plan, ctx.run);
}

}  // namespace weft
