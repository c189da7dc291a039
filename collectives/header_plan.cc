// Call headers on the FIFO path (see header_plan.h).
#include "collectives/header_plan.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "base/error.h"
#include "transports/channel.h"

namespace weft {

namespace {
thread_local std::vector<HeaderedPlan::Flow> flowStorage;
// Per flow: the header and a small first item, sent as one piece.
thread_local std::vector<std::vector<char>> combinedStorage;
// A first item up to this size leaves with its header in one send. Over a
// socket the copy is cheap next to a header sent on its own, which costs a
// segment and a receiver wake-up of its own (with or without TCP
// autocorking). Over shared memory or verbs one send saves little, so only
// small items there.
constexpr size_t kCoalesceSocket = 256 << 10;
constexpr size_t kCoalesceOther = 4096;
}  // namespace

HeaderedPlan::HeaderedPlan(FlowPlan& inner, CallCheck& check)
    : inner_(inner), check_(check), flows_(flowStorage) {
  const int nflows = inner.numFlows();
  flows_.clear();
  flows_.resize(nflows);
  for (int f = 0; f < nflows; ++f) {
    flows_[f].inner = f;
    flows_[f].send = inner.isSend(f);
    // Plans may keep empty flows (to this rank, say) whose channel must not be asked for.
    if (inner.numItems(f) > 0) flows_[f].channel = inner.channel(f);
  }
  check.theirs.resize(check.nranks);
  for (int p = 0; p < check.nranks; ++p) {
    if (p == check.rank) continue;
    for (int dir = 0; dir < 2; ++dir) {
      const bool send = dir == 0;
      Channel* ch = send ? check.channels->sendChannel(p, 0) : check.channels->recvChannel(p, 0);
      // The first inner flow on this channel carries the header; flows on one
      // channel in one direction are sequenced by the plan, the first goes first.
      int carrier = -1;
      for (int f = 0; f < nflows && carrier < 0; ++f)
        if (flows_[f].channel == ch && flows_[f].send == send && ch != nullptr) carrier = f;
      if (carrier < 0) {
        flows_.push_back(Flow{-1, p, send, ch});
        carrier = static_cast<int>(flows_.size()) - 1;
      }
      Flow& fl = flows_[carrier];
      fl.peer = p;
      if (send) {
        sendEarly(fl, carrier);
      } else {
        fl.head = reinterpret_cast<char*>(&check.theirs[p]);
        fl.headBytes = sizeof(CallHeader);
      }
    }
  }
}

void HeaderedPlan::sendEarly(Flow& fl, int index) {
  if (combinedStorage.size() <= static_cast<size_t>(index)) combinedStorage.resize(index + 1);
  std::vector<char>& buf = combinedStorage[index];
  const char* header = reinterpret_cast<const char*>(&check_.mine);
  buf.assign(header, header + sizeof(CallHeader));
  if (fl.inner >= 0 && inner_.numItems(fl.inner) > 0) {
    FlowItem first = inner_.item(fl.inner, 0);
    const bool socket = fl.channel->wake().via == ChannelWake::Via::kFd;
    if (first.depFlow < 0 && first.depFlow2 < 0 &&
        first.bytes <= (socket ? kCoalesceSocket : kCoalesceOther)) {
      buf.insert(buf.end(), first.data, first.data + first.bytes);
      fl.innerFrom = 1;
    }
  }
  size_t sent = 0;
  for (size_t moved = 1; sent < buf.size() && moved > 0;) {
    moved = 0;
    if (fl.channel->trySend(buf.data() + sent, buf.size() - sent, &moved) != weftSuccess)
      break;  // the engine meets the error again and reports it
    sent += moved;
  }
  if (sent < buf.size()) {
    fl.head = buf.data() + sent;
    fl.headBytes = buf.size() - sent;
  }
}

int64_t HeaderedPlan::numItems(int f) const {
  const Flow& fl = flows_[f];
  return headItems(fl) + (fl.inner >= 0 ? inner_.numItems(fl.inner) - fl.innerFrom : 0);
}

FlowItem HeaderedPlan::item(int f, int64_t index) const {
  const Flow& fl = flows_[f];
  if (index < headItems(fl)) {
    FlowItem it;
    it.data = fl.head;
    it.bytes = fl.headBytes;
    return it;
  }
  FlowItem it = inner_.item(fl.inner, index - headItems(fl) + fl.innerFrom);
  // Dependencies count the other flow's inner items: map to its items here
  // (an inner item that left with the header maps to the head, or to -1,
  // "done", once the eager send took it all).
  if (it.depFlow >= 0) {
    const Flow& dep = flows_[it.depFlow];
    it.depItem += headItems(dep) - dep.innerFrom;
  }
  if (it.depFlow2 >= 0) {
    const Flow& dep = flows_[it.depFlow2];
    it.depItem2 += headItems(dep) - dep.innerFrom;
  }
  return it;
}

void HeaderedPlan::onReceived(int f, int64_t index) {
  Flow& fl = flows_[f];
  if (index < headItems(fl)) {
    fl.headerDone = true;
    if (failure_ == weftSuccess) failure_ = compareCall(check_, fl.peer, check_.theirs[fl.peer]);
    return;
  }
  inner_.onReceived(fl.inner, index - headItems(fl));
}

namespace {
// How long salvageHeaders waits for headers in all. A peer's header left
// before the close that failed us, but over another connection (a large
// call's data has its own, tcp_transport.h), and under load the kernel may
// deliver it late: once, 3 sanitized ranks on 2 cores with a second test
// beside them waited 50 ms in vain. Only the error path pays, and only for
// peers that are alive and not yet in the call: a peer that is gone ends its
// connection, which ends the wait for it at once.
constexpr auto kSalvageTime = std::chrono::milliseconds(500);

// Sleeps until `ch` may have bytes, for at most 10 ms and not past `deadline`.
void awaitBytes(Channel* ch, std::chrono::steady_clock::time_point deadline) {
  using std::chrono::milliseconds;
  const auto left =
      std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
  const int ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(10, left.count())));
  const ChannelWake wake = ch->wake();
  if ((wake.via == ChannelWake::Via::kFd || wake.via == ChannelWake::Via::kFdIn) && wake.fd >= 0) {
    pollfd p{wake.fd, POLLIN, 0};
    poll(&p, 1, ms);
  } else {
    // Shared memory (its fd reports only the peer's death) and channels
    // without an fd: poll by retrying, leaving the CPU to the writer.
    sched_yield();
    usleep(100);
  }
}
}  // namespace

weftResult_t HeaderedPlan::salvageHeaders() {
  // One time limit for all missing headers, and every one gets at least one
  // try: a header already in our buffer must not be skipped because an
  // earlier silent peer, or a preemption, used the time up. That skip told one
  // rank of a mismatched call "remote error" while the others were told why
  // (tests/unit/header_salvage_test.cc).
  const auto deadline = std::chrono::steady_clock::now() + kSalvageTime;
  for (Flow& fl : flows_) {
    if (fl.send || fl.peer < 0 || fl.headerDone) continue;
    // Where the engine put the head item: its first `landed` bytes are there.
    CallHeader& h = check_.theirs[fl.peer];
    size_t got = fl.landed;
    bool gone = false;
    do {
      size_t moved = 0;
      if (fl.channel->tryRecv(reinterpret_cast<char*>(&h) + got, sizeof(h) - got, &moved) !=
          weftSuccess)
        break;  // closed or broken: nothing more will come
      got += moved;
      if (got < sizeof(h) && moved == 0) {
        if (gone) break;
        // A shared-memory peer that exited leaves what it wrote: one more
        // try after its death was seen, then stop.
        gone = fl.channel->checkPeer() != weftSuccess;
        if (!gone) awaitBytes(fl.channel, deadline);
      }
    } while (got < sizeof(h) && std::chrono::steady_clock::now() < deadline);
    fl.headerDone = true;
    if (got == sizeof(h) && compareCall(check_, fl.peer, h) != weftSuccess) return weftInvalidUsage;
  }
  return weftSuccess;
}

void HeaderedPlan::onStopped(int f, int64_t index, size_t landed) {
  Flow& fl = flows_[f];
  if (index < headItems(fl)) {
    if (fl.peer >= 0 && !fl.send) fl.landed = landed;
    return;
  }
  if (fl.inner >= 0) inner_.onStopped(fl.inner, index - headItems(fl), landed);
}

std::string HeaderedPlan::missingPeers() const {
  std::string out;
  for (const Flow& fl : flows_)
    if (!fl.send && fl.peer >= 0 && !fl.headerDone)
      out += (out.empty() ? "" : ",") + std::to_string(fl.peer);
  return out;
}

namespace {
class NoFlows : public FlowPlan {
 public:
  int numFlows() const override { return 0; }
  Channel* channel(int) const override { return nullptr; }
  bool isSend(int) const override { return false; }
  int64_t numItems(int) const override { return 0; }
  FlowItem item(int, int64_t) const override { return FlowItem(); }
};
}  // namespace

weftResult_t exchangeCallHeader(const FlowRunOptions& run) {
  NoFlows none;
  return runFlows(none, run);
}

}  // namespace weft
