// The flow engine (see flow_engine.h).
#include "collectives/flow_engine.h"

#include <poll.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wait.h"
#include "collectives/header_plan.h"
#include "transports/shm/doorbell.h"

namespace weft {
namespace {

struct FlowState {
  int64_t next = 0;   // index of the item in progress
  size_t offset = 0;  // bytes of it already moved
  int64_t done = 0;   // items completed (== next, kept separately for clarity)
  int64_t total = 0;
  FlowItem cur;
  bool haveCur = false;
};

// True while an item's dependencies are not done.
inline bool waiting(const FlowState* st, const FlowItem& it) {
  return (it.depFlow >= 0 && st[it.depFlow].done <= it.depItem) ||
         (it.depFlow2 >= 0 && st[it.depFlow2].done <= it.depItem2);
}

// One run of a plan: passes that move what every flow's channel takes now,
// and between passes without progress, the backoff (spin, yield, then sleep
// on the channels' descriptors or the doorbell).
class PlanRunner {
 public:
  PlanRunner(FlowPlan& plan, const FlowRunOptions& opts)
      : plan_(plan), opts_(opts), nflows_(plan.numFlows()), waiter_(opts) {}
  ~PlanRunner() {  // never leave the doorbell armed on an early return
    if (armed_ && opts_.doorbell) opts_.doorbell->disarm();
  }
  weftResult_t run();

 private:
  // What the flows still waiting wait on, for the sleep.
  struct Waits {
    int npfd = 0;
    bool bellFlows = false, fdFlows = false, polledFlows = false;
  };
  weftResult_t movePass(bool* progressed);
  weftResult_t moveFlow(int f, bool* progressed);
  weftResult_t channelFailed(weftResult_t r);
  Waits collectWaits();
  weftResult_t timedOut();
  // Sleeps until a channel may move (or a bounded time); *again: go back to
  // moving without sleeping (the doorbell was just armed, or flows are polled).
  weftResult_t sleep(const Waits& w, bool* again);
  weftResult_t checkDeaths();

  // A peer's failure ends the run: tell the plan how far each flow got, so
  // that it may read (or send) on from there (header_plan.h).
  weftResult_t stopped(weftResult_t r) {
    for (int f = 0; f < nflows_; ++f)
      if (st_[f].total > 0) plan_.onStopped(f, st_[f].next, st_[f].haveCur ? st_[f].offset : 0);
    return r;
  }

  FlowPlan& plan_;
  const FlowRunOptions& opts_;
  const int nflows_;
  FlowState* st_ = nullptr;
  std::vector<pollfd>* pfds_ = nullptr;
  int remaining_ = 0;
  // WEFT_TIMEOUT without progress (time frozen for the whole process aside:
  // base/wait.h), restarted after progress.
  Waiter waiter_;
  bool deathSuspected_ = false;  // a peer's socket closed; confirmed after one more idle pass
  bool armed_ = false;           // doorbell armed, waiting for one more idle pass
  bool armedPoll_ = false;       // armed to sleep in poll() (sockets wait too), not the futex
  uint32_t armedSeq_ = 0;
};

weftResult_t PlanRunner::channelFailed(weftResult_t r) {
  // Abort shuts the sockets down; say "aborted" rather than blame the peer.
  if (opts_.abortFlag && opts_.abortFlag->load())
    return setError(weftInvalidUsage, "communicator aborted");
  return stopped(setError(r, "%s", lastError().c_str()));
}

// Drains flow f as far as it goes without blocking.
weftResult_t PlanRunner::moveFlow(int f, bool* progressed) {
  FlowState& s = st_[f];
  const bool send = plan_.isSend(f);
  while (s.next < s.total) {
    if (!s.haveCur) {
      s.cur = plan_.item(f, s.next);
      s.haveCur = true;
      s.offset = 0;
    }
    if (waiting(st_, s.cur)) break;
    if (s.offset < s.cur.bytes) {
      size_t moved = 0;
      Channel* ch = plan_.channel(f);
      char* at = s.cur.data + s.offset;
      const size_t left = s.cur.bytes - s.offset;
      weftResult_t r = !send          ? ch->tryRecv(at, left, &moved)
                       : s.cur.stable ? ch->trySendStable(at, left, &moved)
                                      : ch->trySend(at, left, &moved);
      if (r != weftSuccess) return channelFailed(r);
      if (moved == 0) break;
      s.offset += moved;
      *progressed = true;
    }
    if (s.offset < s.cur.bytes) continue;
    if (!send) {
      plan_.onReceived(f, s.next);
      WEFT_CHECK(plan_.failure());
    }
    s.haveCur = false;
    ++s.next;
    s.done = s.next;
    *progressed = true;
    if (s.next == s.total) --remaining_;
  }
  return weftSuccess;
}

weftResult_t PlanRunner::movePass(bool* progressed) {
  for (int f = 0; f < nflows_; ++f) WEFT_CHECK(moveFlow(f, progressed));
  return weftSuccess;
}

PlanRunner::Waits PlanRunner::collectWaits() {
  Waits w;
  std::vector<pollfd>& pfds = *pfds_;
  for (int f = 0; f < nflows_; ++f) {
    FlowState& s = st_[f];
    if (s.next >= s.total) continue;
    if (s.haveCur && waiting(st_, s.cur)) continue;
    const ChannelWake wake = plan_.channel(f)->wake();
    const bool bell = wake.via == ChannelWake::Via::kDoorbell;
    if (bell)
      w.bellFlows = true;
    else if (wake.via == ChannelWake::Via::kFd || wake.via == ChannelWake::Via::kFdIn)
      w.fdFlows = true;
    else
      w.polledFlows = true;  // verbs: completions are polled, nothing to sleep on
    if (wake.fd < 0) continue;
    // A doorbell channel's fd reports its peer's death; kFdIn, arrivals.
    const bool pollOut = plan_.isSend(f) && wake.via == ChannelWake::Via::kFd;
    pfds[w.npfd++] = {wake.fd, static_cast<short>(pollOut ? POLLOUT : POLLIN), 0};
  }
  return w;
}

weftResult_t PlanRunner::timedOut() {
  std::string stuck;
  for (int f = 0; f < nflows_ && stuck.size() < 300; ++f) {
    if (st_[f].next >= st_[f].total) continue;
    std::string what = std::string(plan_.isSend(f) ? "sending to " : "receiving from ") +
                       plan_.channel(f)->peerName();
    if (stuck.find(what) == std::string::npos) stuck += (stuck.empty() ? "" : "; ") + what;
  }
  return setError(weftTimeout, "no progress for %.0f s (WEFT_TIMEOUT); still %s", opts_.timeoutSec,
                  stuck.c_str());
}

// Shared-memory channels wake us through the doorbell; their sockets only
// report the peer's death.
weftResult_t PlanRunner::sleep(const Waits& w, bool* again) {
  std::vector<pollfd>& pfds = *pfds_;
  int npfd = w.npfd;
  int pollMs = 100;
  *again = false;
  if (w.polledFlows) {  // keep yielding between passes instead of sleeping
    sched_yield();
    *again = true;
    return weftSuccess;
  }
  Doorbell* bell = opts_.doorbell;
  int wakeSlot = -1;
  if (w.bellFlows && bell != nullptr) {
    if (!armed_) {
      // Arm, then make one more pass before sleeping (doorbell.h explains
      // why). Where sockets wait too, sleep in poll() on them and the wake
      // socket: a futex sleep would leave a socket's bytes unread for up to
      // 1 ms behind a shared-memory flow still waiting.
      armedPoll_ = w.fdFlows && bell->wakeFd >= 0;
      if (armedPoll_) {
        bell->drainWake();
        bell->armPoll();
      } else {
        armedSeq_ = bell->arm();
      }
      armed_ = true;
      *again = true;
      return weftSuccess;
    }
    if (armedPoll_) {
      wakeSlot = npfd;
      pfds[npfd++] = {bell->wakeFd, POLLIN, 0};
    } else {
      // No wake socket: sockets are looked at every 1 ms at most.
      bell->wait(armedSeq_, w.fdFlows ? 1000 : 20000);
      bell->disarm();
      armed_ = false;
      pollMs = 0;  // just collect socket readiness and deaths
    }
  } else if (w.bellFlows) {
    pollMs = 1;
  }
  int rc = poll(pfds.data(), npfd, pollMs);
  if (rc < 0 && errno != EINTR)
    return setError(weftSystemError, "poll failed: %s", strerror(errno));
  if (wakeSlot >= 0) {
    bell->disarm();
    armed_ = false;
    if (rc > 0 && pfds[wakeSlot].revents != 0) --rc;  // a ring, not a death
  }
  if (rc > 0 && w.bellFlows) return checkDeaths();
  return weftSuccess;
}

weftResult_t PlanRunner::checkDeaths() {
  for (int f = 0; f < nflows_; ++f) {
    if (st_[f].next >= st_[f].total) continue;
    weftResult_t r = plan_.channel(f)->checkPeer();
    // A peer that finished its part may exit before we drained what it left
    // in shared memory: only a second idle pass after the death is a failure.
    if (r != weftSuccess && !deathSuspected_) {
      deathSuspected_ = true;
      break;
    }
    if (r != weftSuccess) return channelFailed(r);
  }
  return weftSuccess;
}

weftResult_t PlanRunner::run() {
  // Reused per thread: a call allocates nothing once the thread has run one.
  thread_local std::vector<FlowState> states;
  thread_local std::vector<pollfd> pfds;
  states.assign(nflows_, FlowState());
  pfds.resize(nflows_ + 1);  // each flow's descriptor, and the doorbell's wake socket
  st_ = states.data();
  pfds_ = &pfds;
  for (int f = 0; f < nflows_; ++f) {
    st_[f].total = plan_.numItems(f);
    if (st_[f].total > 0) ++remaining_;
  }
  // Every channel of the plan ready before any byte moves (Channel::prepare).
  for (int f = 0; f < nflows_; ++f) {
    if (st_[f].total == 0) continue;
    weftResult_t r = plan_.channel(f)->prepare();
    if (r != weftSuccess) return channelFailed(r);
  }
  while (remaining_ > 0) {
    bool progressed = false;
    WEFT_CHECK(movePass(&progressed));
    if (remaining_ == 0) break;
    if (progressed) {
      if (armed_) {
        opts_.doorbell->disarm();
        armed_ = false;
      }
      deathSuspected_ = false;
      waiter_.progressed();
      continue;
    }
    switch (waiter_.idle()) {
      case Waiter::Idle::kLook:
        continue;
      case Waiter::Idle::kAborted:
        return setError(weftInvalidUsage, "communicator aborted");
      case Waiter::Idle::kTimedOut:
        return timedOut();
      case Waiter::Idle::kSleep:
        break;
    }
    // Sleep until a channel we wait on is ready (or a bounded time, to re-check
    // abort and deadlines).
    bool again = false;
    WEFT_CHECK(sleep(collectWaits(), &again));
  }
  return weftSuccess;
}

weftResult_t runPlan(FlowPlan& plan, const FlowRunOptions& opts) {
  return PlanRunner(plan, opts).run();
}

}  // namespace

weftResult_t runFlows(FlowPlan& plan, const FlowRunOptions& opts) {
  if (opts.recorder != nullptr) return opts.recorder->record(plan);
  CallCheck* check = opts.check;
  if (check == nullptr || !check->pending || check->nranks < 2) return runPlan(plan, opts);
  // The call's first flow run carries its header (header_plan.h).
  check->pending = false;
  HeaderedPlan headered(plan, *check);
  weftResult_t r = runPlan(headered, opts);
  if (r == weftTimeout) {
    // Name the ranks that never entered the call, not just the stuck flows.
    return setErrorString(r, lastError() + headered.arrivalNote());
  }
  if (r != weftRemoteError) return r;
  // A peer that saw a mismatch may have left already: prefer its reason.
  std::string why = lastError();
  if (headered.salvageHeaders() != weftSuccess) return weftInvalidUsage;
  return setErrorString(r, why);
}

}  // namespace weft
