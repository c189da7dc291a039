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

weftResult_t runPlan(FlowPlan& plan, const FlowRunOptions& opts) {
  const int nflows = plan.numFlows();
  if (nflows > kMaxFlows) return setError(weftInternalError, "too many flows (%d)", nflows);
  // Reused per thread: a call allocates nothing once the thread has run one.
  thread_local std::vector<FlowState> states;
  thread_local std::vector<pollfd> pfds;
  states.assign(nflows, FlowState());
  pfds.resize(nflows + 1);  // each flow's descriptor, and the doorbell's wake socket
  FlowState* st = states.data();
  int remaining = 0;
  for (int f = 0; f < nflows; ++f) {
    st[f].total = plan.numItems(f);
    if (st[f].total > 0) ++remaining;
  }
  // A peer's failure ends the run: tell the plan how far each started
  // receive got, so that it may read on from there (header_plan.h).
  auto stopped = [&](weftResult_t r) {
    for (int f = 0; f < nflows; ++f)
      if (!plan.isSend(f) && st[f].haveCur) plan.onStopped(f, st[f].next, st[f].offset);
    return r;
  };
  Backoff backoff(opts.spinUs, opts.yieldUs);
  bool deathSuspected = false;  // a peer's socket closed; confirmed after one more idle pass
  bool armed = false;           // doorbell armed, waiting for one more idle pass
  bool armedPoll = false;       // armed to sleep in poll() (sockets wait too), not the futex
  uint32_t armedSeq = 0;
  struct Disarm {  // never leave the doorbell armed on an early return
    const bool& armed;
    Doorbell* bell;
    ~Disarm() {
      if (armed && bell) bell->disarm();
    }
  } disarmOnExit{armed, opts.doorbell};
  // WEFT_TIMEOUT without progress (time frozen for the whole process aside:
  // base/wait.h), restarted lazily after progress, off the fast path.
  Deadline idle = Deadline::after(opts.timeoutSec);
  bool progressSinceCheck = false;

  while (remaining > 0) {
    bool progressed = false;
    for (int f = 0; f < nflows; ++f) {
      FlowState& s = st[f];
      // Drain this flow as far as it goes without blocking.
      while (s.next < s.total) {
        if (!s.haveCur) {
          s.cur = plan.item(f, s.next);
          s.haveCur = true;
          s.offset = 0;
        }
        const bool send = plan.isSend(f);
        if (waiting(st, s.cur)) break;
        size_t moved = 0;
        if (s.offset < s.cur.bytes) {
          Channel* ch = plan.channel(f);
          char* at = s.cur.data + s.offset;
          const size_t left = s.cur.bytes - s.offset;
          weftResult_t r = !send          ? ch->tryRecv(at, left, &moved)
                           : s.cur.stable ? ch->trySendStable(at, left, &moved)
                                          : ch->trySend(at, left, &moved);
          if (r != weftSuccess) {
            // Abort shuts the sockets down; say "aborted" rather than blame the peer.
            if (opts.abortFlag && opts.abortFlag->load())
              return setError(weftInvalidUsage, "communicator aborted");
            return stopped(setError(r, "%s", lastError().c_str()));
          }
          if (moved == 0) break;
          s.offset += moved;
          progressed = true;
        }
        if (s.offset < s.cur.bytes) continue;
        if (!send) {
          plan.onReceived(f, s.next);
          WEFT_CHECK(plan.failure());
        }
        s.haveCur = false;
        ++s.next;
        s.done = s.next;
        progressed = true;
        if (s.next == s.total) --remaining;
      }
    }
    if (remaining == 0) break;
    if (progressed) {
      if (armed) {
        opts.doorbell->disarm();
        armed = false;
      }
      deathSuspected = false;
      backoff.reset();
      progressSinceCheck = true;
      continue;
    }
    if (opts.abortFlag && opts.abortFlag->load(std::memory_order_relaxed)) {
      return setError(weftInvalidUsage, "communicator aborted");
    }
    if (progressSinceCheck) {
      idle.restart();
      progressSinceCheck = false;
    }
    Backoff::Step step = backoff.next();
    if (step == Backoff::Step::kSpin) continue;
    if (step == Backoff::Step::kYield) {
      sched_yield();
      continue;
    }
    // Sleep until a channel we wait on is ready (or a bounded time, to re-check
    // abort and deadlines). Shared-memory channels wake us through the doorbell;
    // their sockets only report the peer's death.
    int npfd = 0;
    bool bellFlows = false, fdFlows = false, polledFlows = false;
    for (int f = 0; f < nflows; ++f) {
      FlowState& s = st[f];
      if (s.next >= s.total) continue;
      bool send = plan.isSend(f);
      if (s.haveCur && waiting(st, s.cur)) continue;
      Channel* ch = plan.channel(f);
      int fd = ch->waitFd();
      if (ch->usesDoorbell())
        bellFlows = true;
      else if (fd >= 0)
        fdFlows = true;
      else
        polledFlows = true;  // verbs: completions are polled, nothing to sleep on
      if (fd < 0) continue;
      pfds[npfd++] = {fd, static_cast<short>(send && !ch->usesDoorbell() ? POLLOUT : POLLIN), 0};
    }
    if (idle.expired()) {
      std::string stuck;
      for (int f = 0; f < nflows && stuck.size() < 300; ++f) {
        if (st[f].next >= st[f].total) continue;
        std::string what = std::string(plan.isSend(f) ? "sending to " : "receiving from ") +
                           plan.channel(f)->peerName();
        if (stuck.find(what) == std::string::npos) stuck += (stuck.empty() ? "" : "; ") + what;
      }
      return setError(weftTimeout, "no progress for %.0f s (WEFT_TIMEOUT); still %s",
                      opts.timeoutSec, stuck.c_str());
    }
    int pollMs = 100;
    if (polledFlows) {  // keep yielding between passes instead of sleeping
      sched_yield();
      continue;
    }
    Doorbell* bell = opts.doorbell;
    int wakeSlot = -1;
    if (bellFlows && bell != nullptr) {
      if (!armed) {
        // Arm, then make one more pass before sleeping (doorbell.h explains
        // why). Where sockets wait too, sleep in poll() on them and the wake
        // socket: a futex sleep left a socket's bytes unread for up to 1 ms
        // behind a shared-memory flow still waiting (halving-doubling over 4
        // nodes x 2 ranks ran 2x slower than over 4 x 1).
        armedPoll = fdFlows && bell->wakeFd >= 0;
        if (armedPoll) {
          bell->drainWake();
          bell->armPoll();
        } else {
          armedSeq = bell->arm();
        }
        armed = true;
        continue;
      }
      if (armedPoll) {
        wakeSlot = npfd;
        pfds[npfd++] = {bell->wakeFd, POLLIN, 0};
      } else {
        // No wake socket: sockets are looked at every 1 ms at most.
        bell->wait(armedSeq, fdFlows ? 1000 : 20000);
        bell->disarm();
        armed = false;
        pollMs = 0;  // just collect socket readiness and deaths
      }
    } else if (bellFlows) {
      pollMs = 1;
    }
    int rc = poll(pfds.data(), npfd, pollMs);
    if (rc < 0 && errno != EINTR)
      return setError(weftSystemError, "poll failed: %s", strerror(errno));
    if (wakeSlot >= 0) {
      bell->disarm();
      armed = false;
      if (rc > 0 && pfds[wakeSlot].revents != 0) --rc;  // a ring, not a death
    }
    if (rc > 0 && bellFlows) {
      for (int f = 0; f < nflows; ++f) {
        if (st[f].next >= st[f].total || !plan.channel(f)->usesDoorbell()) continue;
        weftResult_t r = plan.channel(f)->peerGone();
        // A peer that finished its part may exit before we drained what it left
        // in shared memory: only a second idle pass after the death is a failure.
        if (r != weftSuccess && !deathSuspected) {
          deathSuspected = true;
          break;
        }
        if (r != weftSuccess) {
          if (opts.abortFlag && opts.abortFlag->load())
            return setError(weftInvalidUsage, "communicator aborted");
          return stopped(setError(r, "%s", lastError().c_str()));
        }
      }
    }
  }
  return weftSuccess;
}

}  // namespace

weftResult_t runFlows(FlowPlan& plan, const FlowRunOptions& opts) {
  CallCheck* check = opts.check;
  if (check == nullptr || !check->pending || check->nranks < 2) return runPlan(plan, opts);
  // The call's first flow run carries its header (header_plan.h).
  check->pending = false;
  HeaderedPlan headered(plan, *check);
  weftResult_t r = runPlan(headered, opts);
  if (r == weftTimeout) {
    // Name the ranks that never entered the call, not just the stuck flows.
    const std::string missing = headered.missingPeers(), stuck = lastError();
    return setErrorString(r,
                          stuck + (missing.empty() ? "; every rank entered this call"
                                                   : "; ranks that have not arrived: " + missing));
  }
  if (r != weftRemoteError) return r;
  // A peer that saw a mismatch may have left already: prefer its reason.
  std::string why = lastError();
  if (headered.salvageHeaders() != weftSuccess) return weftInvalidUsage;
  return setErrorString(r, why);
}

}  // namespace weft
