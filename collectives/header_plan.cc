// Call headers on the FIFO path (see header_plan.h).
#include "collectives/header_plan.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "base/error.h"
#include "collectives/dissemination.h"
#include "transports/channel.h"

namespace weft {

namespace {
thread_local std::vector<HeaderedPlan::Flow> flowStorage;
// Per flow: the header and a small first item, sent as one piece.
thread_local std::vector<std::vector<char>> combinedStorage;
thread_local std::vector<HeaderedPlan::GateItem> gateStorage;
thread_local std::vector<int> gateEndStorage;
// The messages received (step 0's headers, later steps' summaries, one per
// rank received from) and the summary this rank sends in each step, taken
// when that step may leave and left alone while it is on the wire.
thread_local std::vector<CallHeader> headersIn;
thread_local std::vector<CallSummary> summariesIn, summariesOut;
// Flow indices of the messages received per step, and of the later steps'
// sends (for the gate).
thread_local std::vector<std::vector<int>> recvByStepStorage;
thread_local std::vector<int> laterSendStorage;
// A first item up to this size leaves with its header in one send. Over a
// socket the copy is cheap next to a header sent on its own, which costs a
// segment and a receiver wake-up of its own (with or without TCP
// autocorking). Over shared memory or verbs one send saves little, so only
// small items there.
constexpr size_t kCoalesceSocket = 256 << 10;
constexpr size_t kCoalesceOther = 4096;

}  // namespace

HeaderedPlan::HeaderedPlan(FlowPlan& inner, CallCheck& check)
    : inner_(inner), check_(check), flows_(flowStorage), gateEnd_(gateEndStorage) {
  const int nflows = inner.numFlows();
  flows_.clear();
  flows_.resize(nflows);
  for (int f = 0; f < nflows; ++f) {
    flows_[f].inner = f;
    flows_[f].send = inner.isSend(f);
    // Plans may keep empty flows (to this rank, say) whose channel must not be asked for.
    if (inner.numItems(f) > 0) flows_[f].channel = inner.channel(f);
  }
  const int n = check.nranks, me = check.rank;
  const std::vector<std::vector<int>>& schedule = cachedDisseminationSchedule(n, check.radix);
  steps_ = static_cast<int>(schedule.size());
  size_t laterMessages = 0;
  for (int k = 1; k < steps_; ++k) laterMessages += schedule[k].size();
  // Sized before any pointer into them is taken.
  headersIn.resize(schedule[0].size());
  summariesIn.resize(laterMessages);
  summariesOut.resize(steps_);
  recvByStepStorage.resize(steps_);
  for (std::vector<int>& v : recvByStepStorage) v.clear();
  laterSendStorage.clear();
  seen_ = summaryOf(check.mine, me);
  size_t nextSummary = 0;
  for (int k = 0; k < steps_; ++k) {
    for (size_t i = 0; i < schedule[k].size(); ++i) {
      const int d = schedule[k][i];
      const int out = carrierFor((me + d) % n, true);
      flows_[out].step = k;
      if (k == 0) {
        sendEarly(flows_[out], out);
        if (flows_[out].head != nullptr) laterSendStorage.push_back(out);  // not all left
      } else {
        flows_[out].head = reinterpret_cast<char*>(&summariesOut[k]);
        flows_[out].headBytes = sizeof(CallSummary);
        laterSendStorage.push_back(out);
      }
      const int in = carrierFor((me - d + n) % n, false);
      Flow& fl = flows_[in];
      fl.step = k;
      if (k == 0) {
        fl.head = reinterpret_cast<char*>(&headersIn[i]);
        fl.headBytes = sizeof(CallHeader);
      } else {
        fl.head = reinterpret_cast<char*>(&summariesIn[nextSummary++]);
        fl.headBytes = sizeof(CallSummary);
      }
      recvByStepStorage[k].push_back(in);
    }
  }
  if (steps_ > 1) addGate(recvByStepStorage, laterSendStorage);
}

int HeaderedPlan::carrierFor(int peer, bool send) {
  Channel* ch =
      send ? check_.channels->sendChannel(peer, 0) : check_.channels->recvChannel(peer, 0);
  // The first inner flow on this channel carries the message; flows on one
  // channel in one direction are sequenced by the plan, the first goes first.
  const int nflows = inner_.numFlows();
  for (int f = 0; f < nflows && ch != nullptr; ++f)
    if (flows_[f].channel == ch && flows_[f].send == send) {
      flows_[f].peer = peer;
      return f;
    }
  Flow fl;
  fl.peer = peer;
  fl.send = send;
  fl.channel = ch;
  flows_.push_back(fl);
  return static_cast<int>(flows_.size()) - 1;
}

void HeaderedPlan::addGate(const std::vector<std::vector<int>>& recvByStep,
                           const std::vector<int>& laterSends) {
  gateStorage.clear();
  gateEnd_.assign(steps_, -1);
  for (int k = 0; k < steps_; ++k) {
    for (int f : recvByStep[k]) gateStorage.push_back(GateItem{f, -1});
    if (k + 1 < steps_) {
      gateStorage.back().snapshot = k + 1;
      gateEnd_[k] = static_cast<int>(gateStorage.size()) - 1;
    }
  }
  // Then this rank's own later messages: it fails only once they have left.
  for (int f : laterSends) gateStorage.push_back(GateItem{f, -1});
  Flow gate;
  gate.gate = true;
  // Its items never touch the channel; the engine wants one per flow.
  gate.channel = flows_[recvByStep[0][0]].channel;
  flows_.push_back(gate);
  gate_ = static_cast<int>(flows_.size()) - 1;
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
  if (fl.gate) return static_cast<int64_t>(gateStorage.size());
  return headItems(fl) + (fl.inner >= 0 ? inner_.numItems(fl.inner) - fl.innerFrom : 0);
}

FlowItem HeaderedPlan::item(int f, int64_t index) const {
  const Flow& fl = flows_[f];
  if (fl.gate) {  // empty: done once its message is (a head is item 0 of its flow)
    FlowItem it;
    it.depFlow = gateStorage[index].flow;
    it.depItem = 0;
    return it;
  }
  if (index < headItems(fl)) {
    FlowItem it;
    it.data = fl.head;
    it.bytes = fl.headBytes;
    // A later step's summary leaves once the steps before it arrived.
    if (fl.send && fl.step > 0) {
      it.depFlow = gate_;
      it.depItem = gateEnd_[fl.step - 1];
    }
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
  if (fl.gate) {
    const GateItem& g = gateStorage[static_cast<size_t>(index)];
    if (g.snapshot >= 0) summariesOut[g.snapshot] = seen_;
    if (index + 1 == static_cast<int64_t>(gateStorage.size()) && failure_ == weftSuccess)
      failure_ = verdict();
    return;
  }
  if (index < headItems(fl)) {
    fl.headerDone = true;
    if (failure_ == weftSuccess) failure_ = takeIn(fl);
    return;
  }
  inner_.onReceived(fl.inner, index - headItems(fl));
}

weftResult_t HeaderedPlan::takeIn(Flow& fl) {
  if (fl.step == 0) {
    CallHeader h;
    std::memcpy(&h, fl.head, sizeof(h));
    if (steps_ == 1) return compareCall(check_, fl.peer, h);
    mergeSummary(seen_, summaryOf(h, fl.peer));
    return weftSuccess;
  }
  CallSummary s;
  std::memcpy(&s, fl.head, sizeof(s));
  // Its headers may lack the magic (a rank in point-to-point calls, passed
  // on); ranks out of range mean it is no summary at all (that rank's bytes
  // are something else), which then stands for the peer's own call.
  const bool summary =
      s.loRank >= 0 && s.loRank < check_.nranks && s.hiRank >= 0 && s.hiRank < check_.nranks;
  mergeSummary(seen_, summary ? s : summaryOf(s.lo, fl.peer));
  return weftSuccess;
}

weftResult_t HeaderedPlan::verdict() {
  if (steps_ == 1 || summaryAgrees(seen_)) return weftSuccess;
  // One of the two differs from this rank's call: report that one.
  const CallHeader mine = canonicalHeader(check_.mine);
  const bool lo = std::memcmp(&seen_.lo, &mine, sizeof(mine)) != 0;
  const weftResult_t r =
      compareCall(check_, lo ? seen_.loRank : seen_.hiRank, lo ? seen_.lo : seen_.hi);
  if (r != weftSuccess) return r;
  check_.mismatch = true;  // not reached: canonical headers differ where compareCall does
  return setError(weftInvalidUsage, "collective mismatch: ranks %d and %d called %s and %s",
                  seen_.loRank, seen_.hiRank, describeHeader(seen_.lo).c_str(),
                  describeHeader(seen_.hi).c_str());
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

bool HeaderedPlan::receivedBefore(int step) const {
  for (int k = 0; k < step; ++k)
    for (int f : recvByStepStorage[k])
      if (!flows_[f].headerDone) return false;
  return true;
}

weftResult_t HeaderedPlan::salvageHeaders() {
  // One time limit for all missing messages, and every one gets at least one
  // try: a header already in our buffer must not be skipped because an
  // earlier silent peer, or a preemption, used the time up. That skip told one
  // rank of a mismatched call "remote error" while the others were told why
  // (tests/unit/header_salvage_test.cc). With several steps this rank also
  // sends what it still owes the ranks after it, as the steps before allow:
  // they learn the news only through it.
  const auto deadline = std::chrono::steady_clock::now() + kSalvageTime;
  thread_local std::vector<char> deathSeen;
  deathSeen.assign(flows_.size(), 0);
  bool open = true;
  for (bool first = true; open && (first || std::chrono::steady_clock::now() < deadline);
       first = false) {
    open = false;
    bool progressed = false;
    Channel* silent = nullptr;
    for (size_t f = 0; f < flows_.size(); ++f) {
      Flow& fl = flows_[f];
      if (fl.gate || fl.peer < 0 || fl.head == nullptr || fl.headerDone) continue;
      size_t moved = 0;
      if (fl.send) {
        if (steps_ == 1) continue;  // its eager send was all the check needed
        if (fl.step > 0 && fl.landed == 0) {
          if (!receivedBefore(fl.step)) {
            open = true;
            continue;
          }
          summariesOut[fl.step] = seen_;  // nothing of it left yet: take it now
        }
        // A peer that is gone needs nothing more.
        if (fl.channel->trySend(fl.head + fl.landed, fl.headBytes - fl.landed, &moved) !=
            weftSuccess)
          fl.headerDone = true;
        fl.landed += moved;
        progressed = progressed || moved > 0;
        if (fl.landed == fl.headBytes) fl.headerDone = true;
        open = open || !fl.headerDone;
        continue;
      }
      // Where the engine put the head item: its first `landed` bytes are there.
      if (fl.channel->tryRecv(fl.head + fl.landed, fl.headBytes - fl.landed, &moved) !=
          weftSuccess) {
        fl.headerDone = true;  // closed or broken: nothing more will come
        continue;
      }
      fl.landed += moved;
      if (fl.landed == fl.headBytes) {
        fl.headerDone = true;
        progressed = true;
        if (takeIn(fl) != weftSuccess) return weftInvalidUsage;
        continue;
      }
      open = true;
      if (moved > 0) {
        progressed = true;
      } else if (deathSeen[f]) {
        fl.headerDone = true;  // a shared-memory peer that exited: its one last try is over
      } else {
        // A shared-memory peer that exited leaves what it wrote: one more
        // try after its death was seen, then stop.
        deathSeen[f] = fl.channel->checkPeer() != weftSuccess;
        silent = fl.channel;
      }
    }
    if (open && !progressed) {
      if (silent != nullptr)
        awaitBytes(silent, deadline);
      else
        usleep(100);
    }
  }
  return verdict() != weftSuccess ? weftInvalidUsage : weftSuccess;
}

void HeaderedPlan::onStopped(int f, int64_t index, size_t landed) {
  Flow& fl = flows_[f];
  if (fl.gate) return;
  if (index < headItems(fl)) {
    if (fl.peer >= 0) fl.landed = landed;  // bytes of the message moved, either way
    return;
  }
  if (fl.send && fl.head != nullptr) fl.headerDone = true;  // the engine sent it all
  if (fl.inner >= 0) inner_.onStopped(fl.inner, index - headItems(fl), landed);
}

std::string HeaderedPlan::arrivalNote() const {
  std::string direct, later;
  for (const Flow& fl : flows_) {
    if (fl.send || fl.gate || fl.peer < 0 || fl.headerDone) continue;
    std::string& into = fl.step == 0 ? direct : later;
    into += (into.empty() ? "" : ",") + std::to_string(fl.peer);
  }
  // A later step's message waits for the steps before on its sender: its
  // absence says that its sender, or someone further off, has not arrived.
  if (!direct.empty()) return "; ranks that have not arrived: " + direct;
  if (later.empty()) return "; every rank entered this call";
  return "; the ranks this one hears from first arrived, but the call check's later steps have "
         "not come from ranks " +
         later +
         " (each has not arrived, or waits for one further off that has not; the ranks "
         "that hear from that one first name it)";
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
