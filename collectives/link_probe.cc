// Link measurement for the tuner (see link_probe.h). Each exchange is its own
// run of the flow engine and is timed alone; the minimum over a few runs is
// kept, which discards the first runs' slow start and the noise of a busy
// machine.
#include "collectives/link_probe.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"

namespace weft {
namespace {

// One exchange: the initiator sends `out` bytes and then receives `back`
// bytes; the peer answers once the whole message arrived.
class PingPlan : public FlowPlan {
 public:
  PingPlan(CollContext& ctx, int peer, bool initiator, size_t out, size_t back)
      : ctx_(ctx), peer_(peer), init_(initiator), out_(out), back_(back) {}
  int numFlows() const override { return 2; }
  bool isSend(int f) const override { return f == 0; }
  Channel* channel(int f) const override {
    return f == 0 ? ctx_.channels->sendChannel(peer_, 0) : ctx_.channels->recvChannel(peer_, 0);
  }
  int64_t numItems(int) const override { return 1; }
  FlowItem item(int f, int64_t) const override {
    FlowItem it;
    const size_t half = ctx_.stagingBytes / 2;
    it.data = f == 0 ? ctx_.staging : ctx_.staging + half;
    it.bytes = (f == 0) == init_ ? out_ : back_;
    if (f == 0 && !init_) {
      it.depFlow = 1;
      it.depItem = 0;
    }
    return it;
  }

 private:
  CollContext& ctx_;
  int peer_;
  bool init_;
  size_t out_, back_;
};

weftResult_t exchange(CollContext& ctx, int peer, bool init, size_t out, size_t back, double* us) {
  PingPlan plan(ctx, peer, init, out, back);
  auto t0 = std::chrono::steady_clock::now();
  WEFT_CHECK(runFlows(plan, ctx.run));
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return weftSuccess;
}

}  // namespace

weftResult_t probeLink(CollContext& ctx, int peer, bool initiator, LinkModel* out) {
  const size_t big = std::min<size_t>(1 << 20, ctx.stagingBytes / 2);
  double best = 1e30, bestBig = 1e30, us = 0;
  for (int i = 0; i < 30; ++i) {  // the first ten warm up
    WEFT_CHECK(exchange(ctx, peer, initiator, 8, 8, &us));
    if (i >= 10) best = std::min(best, us);
  }
  for (int i = 0; i < 5; ++i) {
    WEFT_CHECK(exchange(ctx, peer, initiator, big, 8, &us));
    if (i >= 1) bestBig = std::min(bestBig, us);
  }
  if (!initiator) return weftSuccess;
  out->alphaUs = best / 2;
  double perByte = (bestBig - best) / static_cast<double>(big);  // us per byte
  out->gbps = perByte > 0 ? 1e-3 / perByte : 100.0;
  return weftSuccess;
}

}  // namespace weft
