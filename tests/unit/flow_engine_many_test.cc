// The flow engine with more flows than a job of hundreds of ranks gives one
// call (a one-round allreduce or an all-to-all at 512 ranks has 1,024: a
// send and a receive per rank): every flow's bytes arrive, in order, and the
// dependencies between flows still hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/flow_engine.h"
#include "transports/channel.h"

namespace {

// One direction of an in-memory byte stream: sends append, receives take from
// the front, a few bytes at a time (so items move in several tries).
struct Pipe {
  std::deque<char> bytes;
};

class PipeEnd : public weft::Channel {
 public:
  explicit PipeEnd(Pipe* pipe) : pipe_(pipe) {}
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override {
    *moved = std::min<size_t>(bytes, 3);
    const char* p = static_cast<const char*>(data);
    pipe_->bytes.insert(pipe_->bytes.end(), p, p + *moved);
    return weftSuccess;
  }
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override {
    *moved = std::min(bytes, std::min<size_t>(pipe_->bytes.size(), 5));
    std::copy_n(pipe_->bytes.begin(), *moved, static_cast<char*>(data));
    pipe_->bytes.erase(pipe_->bytes.begin(), pipe_->bytes.begin() + static_cast<long>(*moved));
    return weftSuccess;
  }
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override {
    *got = std::min(bytes, pipe_->bytes.size());
    std::copy_n(pipe_->bytes.begin(), *got, static_cast<char*>(data));
    return weftSuccess;
  }
  weft::ChannelWake wake() const override { return {weft::ChannelWake::Via::kRetry, -1}; }
  const std::string& peerName() const override { return name_; }

 private:
  Pipe* pipe_;
  std::string name_ = "pipe";
};

// Flow 2p sends `out[p]` into pipe p in two items; flow 2p+1 receives it into
// `in[p]`. Pipe p's send waits for pipe p-1's receive to finish (a chain
// across all flows, as a ring's forwarding is).
class ChainPlan : public weft::FlowPlan {
 public:
  explicit ChainPlan(int pipes) : pipes_(pipes), out(pipes), in(pipes) {
    for (int p = 0; p < pipes; ++p) {
      pipe_.push_back(std::make_unique<Pipe>());
      ends_.push_back(std::make_unique<PipeEnd>(pipe_.back().get()));
      out[p] = "flow " + std::to_string(p) + " of " + std::to_string(pipes);
      in[p].assign(out[p].size(), '?');
    }
  }
  int numFlows() const override { return 2 * pipes_; }
  weft::Channel* channel(int flow) const override { return ends_[flow / 2].get(); }
  bool isSend(int flow) const override { return flow % 2 == 0; }
  int64_t numItems(int) const override { return 2; }
  weft::FlowItem item(int flow, int64_t index) const override {
    const int p = flow / 2;
    const std::string& s = flow % 2 == 0 ? out[p] : in[p];
    const size_t half = s.size() / 2;
    weft::FlowItem it;
    it.data = const_cast<char*>(s.data()) + (index == 0 ? 0 : half);
    it.bytes = index == 0 ? half : s.size() - half;
    if (flow % 2 == 0 && index == 0 && p > 0) it.waitFor(flow - 1, 1);
    return it;
  }

  int pipes_;
  std::vector<std::unique_ptr<Pipe>> pipe_;
  std::vector<std::unique_ptr<PipeEnd>> ends_;
  std::vector<std::string> out, in;
};

TEST(FlowEngine, RunsPlansOfThousandsOfFlows) {
  ChainPlan plan(1500);  // 3,000 flows
  weft::FlowRunOptions opts;
  opts.timeoutSec = 60;
  ASSERT_EQ(weft::runFlows(plan, opts), weftSuccess) << weft::lastError();
  for (int p = 0; p < 1500; ++p) ASSERT_EQ(plan.in[p], plan.out[p]) << "pipe " << p;
}

}  // namespace
