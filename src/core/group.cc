// Group calls (weftGroupStart/End). Calls made inside a group are validated at
// once but only recorded, per thread; the outermost weftGroupEnd runs each
// communicator's calls as one unit (point-to-point fused), and runs different
// communicators concurrently on their progress threads, so one thread can
// drive several ranks' communicators without deadlock. A communicator whose
// calls are on a CUDA stream has them enqueued there (device/stream_group.h)
// instead, all communicators' or none: weftGroupEnd does not wait for those.
#include <algorithm>
#include <deque>
#include <vector>

#include "base/error.h"
#include "core/call.h"
#include "core/comm.h"
#include "core/request_handles.h"
#include "device/stream_group.h"

using namespace weft;

namespace {

struct GroupPart {
  weftComm* comm = nullptr;
  std::vector<Call> calls;
};

// One thread's group. Its vectors keep their capacity from group to group,
// so a blocking group of the same shape as the last allocates nothing.
struct GroupState {
  int depth = 0;
  std::vector<GroupPart> parts;  // [0, nparts): this group's communicators, in first-use order
  size_t nparts = 0;
  std::vector<CommCall> held;  // endGroup: the communicators it holds while the group runs
  std::vector<weftComm*> hostComms;
  std::vector<StreamGroupPart> streamParts;
};

thread_local GroupState tlsGroup;

// Ends the group on every path out of endGroup: releases the communicators,
// then forgets the calls (keeping the capacity).
struct GroupReset {
  ~GroupReset() {
    GroupState& g = tlsGroup;
    g.held.clear();
    for (size_t i = 0; i < g.nparts; ++i) g.parts[i].calls.clear();
    g.nparts = 0;
    g.hostComms.clear();
    g.streamParts.clear();
  }
};

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
  GroupState& g = tlsGroup;
  if (g.depth == 0) return setError(weftInvalidUsage, "weftGroupEnd: no weftGroupStart is open");
  if (--g.depth > 0) return weftSuccess;
  GroupReset reset;
  if (request != nullptr) *request = nullptr;
  // Every communicator must still be alive and usable, and stays owned by
  // this thread until the group has run (or been queued).
  for (size_t i = 0; i < g.nparts; ++i) {
    g.held.emplace_back(g.parts[i].comm, "weftGroupEnd");
    WEFT_CHECK(g.held.back().status());
  }
  // Calls on a stream first: enqueuing them never waits.
  for (size_t i = 0; i < g.nparts; ++i) {
    GroupPart& part = g.parts[i];
    if (part.calls.front().stream == nullptr) {
      g.hostComms.push_back(part.comm);
      continue;
    }
    if (request != nullptr)
      return setError(weftInvalidUsage,
                      "weftGroupEndAsync: the group has calls on a CUDA stream, which complete on "
                      "their stream; end it with weftGroupEnd");
    g.streamParts.push_back({part.comm, &part.calls});
  }
  for (const StreamGroupPart& part : g.streamParts)
    WEFT_CHECK(checkStreamGroup("weftGroupEnd", *part.calls, part.comm->rank, part.comm->nranks));
  if (!g.streamParts.empty()) {
    std::vector<weftComm*> all;
    for (size_t i = 0; i < g.nparts; ++i) all.push_back(g.parts[i].comm);
    WEFT_CHECK(enqueueStreamParts(all, g.streamParts));
  }
  if (g.hostComms.empty() && request == nullptr) return weftSuccess;  // all on streams
  if (g.hostComms.empty()) {  // an empty group: nothing to run
    auto* empty = new weftRequest();
    empty->done.store(true);
    *request = handOutRequest(empty);
    return weftSuccess;
  }
  auto callsOf = [&g](weftComm* comm) -> std::vector<Call>& {
    size_t i = 0;
    while (g.parts[i].comm != comm) ++i;
    return g.parts[i].calls;
  };
  if (request == nullptr && g.hostComms.size() == 1 && g.hostComms[0]->progress.idle()) {
    weftComm* comm = g.hostComms[0];  // held since the start
    return executeCalls(comm, callsOf(comm));
  }
  auto* all = new weftRequest();
  for (weftComm* comm : g.hostComms) {
    weftRequest* part = makeRequest(comm, std::move(callsOf(comm)));
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

// Ends the outermost group without running it: the estimate of its calls,
// which are dropped and their call numbers given back, so that the next call
// on each communicator pairs with the peers' next one. Point-to-point calls
// of one communicator run fused (concurrently): they count as the longest.
weftResult_t simulateEndGroup(float* estimatedUs) {
  GroupState& g = tlsGroup;
  if (g.depth == 0)
    return setError(weftInvalidUsage, "weftGroupSimulateEnd: no weftGroupStart is open");
  if (--g.depth > 0) return weftSuccess;
  GroupReset reset;
  double total = 0;
  for (size_t i = 0; i < g.nparts; ++i) {
    CommCall hold(g.parts[i].comm, "weftGroupSimulateEnd");
    WEFT_CHECK(hold.status());
    double p2p = 0;
    for (const Call& call : g.parts[i].calls) {
      const double us = estimateCallUs(g.parts[i].comm, call);
      if (isP2P(call.kind))
        p2p = std::max(p2p, us);
      else
        total += us;
    }
    total += p2p;
    g.parts[i].comm->seq -= g.parts[i].calls.size();
  }
  *estimatedUs = static_cast<float>(total);
  return weftSuccess;
}

}  // namespace

namespace weft {

bool inGroup() { return tlsGroup.depth > 0; }

weftResult_t recordInGroup(weftComm* comm, const char* fn, const Call& call) {
  GroupState& g = tlsGroup;
  size_t i = 0;
  while (i < g.nparts && g.parts[i].comm != comm) ++i;
  if (i == g.nparts) {
    if (g.nparts == g.parts.size()) g.parts.emplace_back();
    g.parts[i].comm = comm;
    g.parts[i].calls.clear();
    ++g.nparts;
  } else if (g.parts[i].calls.front().stream != call.stream) {
    return setError(weftInvalidArgument,
                    "%s: stream=%p differs from stream=%p of the earlier calls on this "
                    "communicator in the group: a group's calls on one communicator share one "
                    "stream",
                    fn, call.stream, g.parts[i].calls.front().stream);
  }
  g.parts[i].calls.push_back(call);
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

extern "C" weftResult_t weftGroupSimulateEnd(float* estimatedUs) {
  clearError();
  if (estimatedUs == nullptr)
    return setError(weftInvalidArgument,
                    "weftGroupSimulateEnd: estimatedUs is NULL (the group stays open)");
  return simulateEndGroup(estimatedUs);
}
