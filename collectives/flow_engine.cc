// The flow engine (see flow_engine.h).
#include "collectives/flow_engine.h"

#include <poll.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/wait.h"

namespace weft {
namespace {

struct FlowState {
  int64_t next = 0;     // index of the item in progress
  size_t offset = 0;    // bytes of it already moved
  int64_t done = 0;     // items completed (== next, kept separately for clarity)
  int64_t total = 0;
  FlowItem cur;
  bool haveCur = false;
};

}  // namespace

weftResult_t runFlows(FlowPlan& plan, const FlowRunOptions& opts) {
  const int nflows = plan.numFlows();
  if (nflows > kMaxFlows) return setError(weftInternalError, "%s: too many flows (%d)", opts.what, nflows);
  // Reused per thread: a call allocates nothing once the thread has run one.
  thread_local std::vector<FlowState> states;
  thread_local std::vector<pollfd> pfds;
  states.assign(nflows, FlowState());
  pfds.resize(nflows);
  FlowState* st = states.data();
  int remaining = 0;
  for (int f = 0; f < nflows; ++f) {
    st[f].total = plan.numItems(f);
    if (st[f].total > 0) ++remaining;
  }
  Backoff backoff(opts.spinUs);
  Clock::time_point lastProgress = Clock::now();
  const auto timeout = std::chrono::microseconds(static_cast<int64_t>(opts.timeoutSec * 1e6));

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
        if (send && s.cur.depFlow >= 0 && st[s.cur.depFlow].done <= s.cur.depItem) break;
        size_t moved = 0;
        if (s.offset < s.cur.bytes) {
          Channel* ch = plan.channel(f);
          weftResult_t r = send ? ch->trySend(s.cur.data + s.offset, s.cur.bytes - s.offset, &moved)
                                : ch->tryRecv(s.cur.data + s.offset, s.cur.bytes - s.offset, &moved);
          if (r != weftSuccess) {
            // Abort shuts the sockets down; say "aborted" rather than blame the peer.
            if (opts.abortFlag && opts.abortFlag->load())
              return setError(weftInvalidUsage, "%s: communicator aborted", opts.what);
            return setError(r, "%s: %s", opts.what, lastError().c_str());
          }
          if (moved == 0) break;
          s.offset += moved;
          progressed = true;
        }
        if (s.offset < s.cur.bytes) continue;
        if (!send) plan.onReceived(f, s.next);
        s.haveCur = false;
        ++s.next;
        s.done = s.next;
        progressed = true;
        if (s.next == s.total) --remaining;
      }
    }
    if (remaining == 0) break;
    if (progressed) {
      backoff.reset();
      lastProgress = Clock::now();
      continue;
    }
    if (opts.abortFlag && opts.abortFlag->load(std::memory_order_relaxed)) {
      return setError(weftInvalidUsage, "%s: communicator aborted", opts.what);
    }
    Backoff::Step step = backoff.next();
    if (step == Backoff::Step::kSpin) continue;
    if (step == Backoff::Step::kYield) {
      sched_yield();
      continue;
    }
    // Sleep until a channel we wait on is ready (or 100 ms, to re-check abort).
    int npfd = 0;
    for (int f = 0; f < nflows; ++f) {
      FlowState& s = st[f];
      if (s.next >= s.total) continue;
      bool send = plan.isSend(f);
      if (send && s.haveCur && s.cur.depFlow >= 0 && st[s.cur.depFlow].done <= s.cur.depItem) continue;
      int fd = plan.channel(f)->waitFd();
      if (fd < 0) continue;
      pfds[npfd++] = {fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    }
    if (Clock::now() - lastProgress > timeout) {
      std::string stuck;
      for (int f = 0; f < nflows && stuck.size() < 300; ++f) {
        if (st[f].next >= st[f].total) continue;
        stuck += (stuck.empty() ? "" : "; ") + std::string(plan.isSend(f) ? "sending to " : "receiving from ") +
                 plan.channel(f)->peerName();
      }
      return setError(weftTimeout, "%s: no progress for %.0f s (WEFT_TIMEOUT); still %s", opts.what,
                      opts.timeoutSec, stuck.c_str());
    }
    int rc = poll(pfds.data(), npfd, 100);
    if (rc < 0 && errno != EINTR) return setError(weftSystemError, "%s: poll failed: %s", opts.what, strerror(errno));
  }
  return weftSuccess;
}

}  // namespace weft
