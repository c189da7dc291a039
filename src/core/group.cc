// Group calls (weftGroupStart/End). Calls made inside a group are validated at
// once but only recorded, per thread; the outermost weftGroupEnd runs each
// communicator's calls as one unit (point-to-point fused), and runs different
// communicators concurrently on their progress threads, so one thread can
// drive several ranks' communicators without deadlock. A communicator whose
// calls are on a CUDA stream has them enqueued there (device/stream_group.h)
// instead, all communicators' or none: weftGroupEnd does not wait for those.
#include <deque>
#include <map>
#include <vector>

#include "base/error.h"
#include "core/call.h"
#include "core/comm.h"
#include "core/request_handles.h"
#include "device/stream_group.h"

using namespace weft;

namespace {

struct GroupState {
  int depth = 0;
  std::vector<weftComm*> order;  // communicators in first-use order
  std::map<weftComm*, std::vector<Call>> calls;
};

thread_local GroupState tlsGroup;

// Takes the recorded group out of this thread's state.
GroupState takeGroup() {
  GroupState g = std::move(tlsGroup);
  tlsGroup = GroupState();
  return g;
}

weftRequest* makeRequest(weftComm* comm, std::vector<Call> calls) {
  auto* req = new weftRequest();
  req->work = [comm, calls = std::move(calls)] { return executeCalls(comm, calls); };
  return req;
}

// Enqueues the group's stream parts (every communicator's, or none: see
// stream_group.h), holding every communicator of the group meanwhile. The
// group's calls were accepted, so peers will run their parts of it: if this
// rank cannot, every communicator of the group is broken, so that their
// peers fail too (at once where the transports notice, within WEFT_TIMEOUT
// otherwise) instead of some running a part this rank never runs. The host
// parts are not run either.
weftResult_t enqueueStreamParts(const std::vector<weftComm*>& comms,
                                const std::vector<StreamGroupPart>& parts) {
  std::deque<CommCall> held;  // CommCall cannot move: a deque keeps them in place
  weftResult_t r = weftSuccess;
  for (weftComm* comm : comms) {
    held.emplace_back(comm, "weftGroupEnd");
    r = held.back().status();
    if (r != weftSuccess) {  // aborted by another thread meanwhile (destroy is refused)
      held.pop_back();
      break;
    }
  }
  if (r == weftSuccess) r = enqueueStreamGroup("weftGroupEnd", parts);
  if (r == weftSuccess) return weftSuccess;
  const std::string text = lastError() +
                           "; no call of the group runs on this rank, and every communicator of "
                           "the group is broken";
  for (size_t i = 0; i < held.size(); ++i)  // comms[i] is held (and alive) for i < held.size()
    comms[i]->markBroken(r, "rank " + std::to_string(comms[i]->rank) + ": " + text);
  return setErrorString(r, text);
}

weftResult_t endGroup(weftRequest_t* request) {
  if (tlsGroup.depth == 0)
    return setError(weftInvalidUsage, "weftGroupEnd: no weftGroupStart is open");
  if (--tlsGroup.depth > 0) return weftSuccess;
  GroupState g = takeGroup();
  if (request != nullptr) *request = nullptr;
  // Every communicator must still be alive and usable, and stays owned by
  // this thread until the group has run (or been queued).
  std::deque<CommCall> owned;  // CommCall cannot move: a deque keeps them in place
  for (weftComm* comm : g.order) {
    owned.emplace_back(comm, "weftGroupEnd");
    WEFT_CHECK(owned.back().status());
  }
  // Calls on a stream first: enqueuing them never waits.
  std::vector<weftComm*> hostComms;
  for (weftComm* comm : g.order) {
    const weftStream_t stream = g.calls[comm].front().stream;
    if (stream == nullptr) {
      hostComms.push_back(comm);
    } else if (request != nullptr) {
      return setError(weftInvalidUsage,
                      "weftGroupEndAsync: the group has calls on a CUDA stream, which complete on "
                      "their stream; end it with weftGroupEnd");
    }
  }
  std::vector<StreamGroupPart> streamParts;
  for (weftComm* comm : g.order)
    if (g.calls[comm].front().stream != nullptr) streamParts.push_back({comm, &g.calls[comm]});
  for (const StreamGroupPart& part : streamParts)
    WEFT_CHECK(checkStreamGroup("weftGroupEnd", *part.calls, part.comm->rank, part.comm->nranks));
  if (!streamParts.empty()) WEFT_CHECK(enqueueStreamParts(g.order, streamParts));
  g.order.swap(hostComms);
  if (g.order.empty() && request == nullptr) return weftSuccess;  // all on streams
  if (g.order.empty()) {                                          // an empty group: nothing to run
    if (request != nullptr) {
      auto* empty = new weftRequest();
      empty->done.store(true);
      *request = handOutRequest(empty);
    }
    return weftSuccess;
  }
  if (request == nullptr && g.order.size() == 1 && g.order[0]->progress.idle()) {
    weftComm* comm = g.order[0];  // held by `owned` since the start
    return executeCalls(comm, g.calls[comm]);
  }
  auto* all = new weftRequest();
  for (weftComm* comm : g.order) {
    weftRequest* part = makeRequest(comm, std::move(g.calls[comm]));
    all->parts.push_back(part);
    comm->progress.submit(part);
  }
  if (request != nullptr) {
    *request = handOutRequest(all);
    return weftSuccess;
  }
  ProgressThread::waitFor(all);
  return ProgressThread::finish(all);
}

}  // namespace

namespace weft {

bool inGroup() { return tlsGroup.depth > 0; }

weftResult_t recordInGroup(weftComm* comm, const char* fn, const Call& call) {
  auto it = tlsGroup.calls.find(comm);
  if (it == tlsGroup.calls.end()) {
    tlsGroup.order.push_back(comm);
    it = tlsGroup.calls.emplace(comm, std::vector<Call>()).first;
  } else if (it->second.front().stream != call.stream) {
    return setError(weftInvalidArgument,
                    "%s: stream=%p differs from stream=%p of the earlier calls on this "
                    "communicator in the group: a group's calls on one communicator share one "
                    "stream",
                    fn, call.stream, it->second.front().stream);
  }
  it->second.push_back(call);
  return weftSuccess;
}

}  // namespace weft

extern "C" weftResult_t weftGroupStart(void) {
  clearError();
  ++tlsGroup.depth;
  return weftSuccess;
}

extern "C" weftResult_t weftGroupEnd(void) {
  clearError();
  return endGroup(nullptr);
}

extern "C" weftResult_t weftGroupEndAsync(weftRequest_t* request) {
  clearError();
  if (request == nullptr)
    return setError(weftInvalidArgument,
                    "weftGroupEndAsync: request is NULL (the group stays open: call again with a "
                    "request, or end it with weftGroupEnd)");
  return endGroup(request);
}
