// One rank of a fault-suite trial (see mp_fault.cc): joins the trial's
// communicator, runs the shared random call sequence until a call fails, then
// checks what a survivor must see and records it in the shared result.
#include "mp_fault_rank.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fault {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

namespace {

constexpr size_t kCounts[] = {1, 5, 64, 1000, 9000, 70000};

// Two non-blocking calls in flight at once, then both waited for: a death
// must fail the pending requests too, and weftWait must free each of them.
weftResult_t asyncPair(weftComm_t comm, size_t count, int root, std::vector<float>& s,
                       std::vector<float>& d) {
  weftRequest_t a = nullptr, b = nullptr;
  weftResult_t ra = weftAllReduceAsync(s.data(), d.data(), count, weftFloat32, weftSum, comm, &a);
  weftResult_t rb =
      weftBroadcastAsync(s.data() + count, d.data() + count, count, weftFloat32, root, comm, &b);
  if (a) ra = weftWait(&a);
  if (b) rb = weftWait(&b);
  return ra != weftSuccess ? ra : rb;
}

// Ring exchange fused in a group: each rank sends to the next, receives from
// the previous; `async` ends the group with weftGroupEndAsync and waits.
weftResult_t groupRing(weftComm_t comm, int n, size_t count, bool async, std::vector<float>& s,
                       std::vector<float>& d) {
  int me = 0;
  weftCommUserRank(comm, &me);
  weftGroupStart();
  weftSend(s.data(), count, weftFloat32, (me + 1) % n, comm, nullptr);
  weftRecv(d.data(), count, weftFloat32, (me + n - 1) % n, comm, nullptr);
  if (!async) return weftGroupEnd();
  weftRequest_t req = nullptr;
  weftResult_t r = weftGroupEndAsync(&req);
  return req ? weftWait(&req) : r;
}

// Blocking pairs outside a group: ranks 2k and 2k+1 exchange, the even one
// sending first; a last odd-numbered rank sits this call out.
weftResult_t pairExchange(weftComm_t comm, int n, size_t count, std::vector<float>& s,
                          std::vector<float>& d) {
  int me = 0;
  weftCommUserRank(comm, &me);
  const int peer = me ^ 1;
  if (peer >= n) return weftSuccess;
  if (me % 2 == 0) {
    weftResult_t r = weftSend(s.data(), count, weftFloat32, peer, comm, nullptr);
    return r != weftSuccess ? r : weftRecv(d.data(), count, weftFloat32, peer, comm, nullptr);
  }
  weftResult_t r = weftRecv(d.data(), count, weftFloat32, peer, comm, nullptr);
  return r != weftSuccess ? r : weftSend(s.data(), count, weftFloat32, peer, comm, nullptr);
}

// One random call; every rank draws the same one from the same generator.
weftResult_t randomCall(std::mt19937_64& rng, weftComm_t comm, int n, std::vector<float>& s,
                        std::vector<float>& d) {
  const unsigned kind = static_cast<unsigned>(rng() % 11);
  const size_t count = kCounts[rng() % (sizeof(kCounts) / sizeof(kCounts[0]))];
  const int root = static_cast<int>(rng() % n);
  switch (kind) {
    case 0:
      return weftAllReduce(s.data(), d.data(), count, weftFloat32, weftSum, comm, nullptr);
    case 1:
      return weftAllGather(s.data(), d.data(), count, weftFloat32, comm, nullptr);
    case 2:
      return weftBroadcast(s.data(), d.data(), count, weftFloat32, root, comm, nullptr);
    case 3:
      return weftReduce(s.data(), d.data(), count, weftFloat32, weftMax, root, comm, nullptr);
    case 4:
      return weftReduceScatter(s.data(), d.data(), count, weftFloat32, weftSum, comm, nullptr);
    case 5:
      return weftAllToAll(s.data(), d.data(), count, weftFloat32, comm, nullptr);
    case 6:
      return asyncPair(comm, count, root, s, d);
    case 7:
      return groupRing(comm, n, count, false, s, d);
    case 8:
      return groupRing(comm, n, count, true, s, d);
    case 9:
      return pairExchange(comm, n, count, s, d);
    default:
      return weftBarrier(comm, nullptr);
  }
}

// On the shrunken communicator: an allreduce and an allgather must be right.
bool shrunkWorks(weftComm_t comm, std::string* why) {
  int r = -1, m = 0;
  weftCommUserRank(comm, &r);
  weftCommCount(comm, &m);
  std::vector<float> v(1000, static_cast<float>(r + 1)), g(m);
  float mine = static_cast<float>(r);
  if (weftAllReduce(v.data(), v.data(), v.size(), weftFloat32, weftSum, comm, nullptr) !=
          weftSuccess ||
      weftAllGather(&mine, g.data(), 1, weftFloat32, comm, nullptr) != weftSuccess) {
    *why = std::string("a call on the shrunken communicator failed: ") + weftGetLastError(nullptr);
    return false;
  }
  if (v[0] != m * (m + 1) / 2.0f || v[999] != v[0]) {
    *why = "wrong allreduce result on the shrunken communicator";
    return false;
  }
  for (int i = 0; i < m; ++i)
    if (g[i] != static_cast<float>(i)) {
      *why = "wrong allgather result on the shrunken communicator";
      return false;
    }
  return true;
}

// A survivor after its call failed because the victim was killed.
bool afterKill(Shared* sh, int rank, weftComm_t comm, weftResult_t r, double tErr,
               const std::string& first, std::string* why) {
  const Plan& p = sh->plan;
  Result& res = sh->result[rank];
  res.timeToError = tErr - sh->deathTime.load();
  const std::string v = std::to_string(p.victim);
  res.namedVictim = first.find("rank " + v + " (") != std::string::npos ||
                    first.find("local rank " + v + " ") != std::string::npos;
  if (r != weftRemoteError && r != weftTimeout) {
    *why = "expected weftRemoteError or weftTimeout, got " + std::string(weftGetErrorString(r));
    return false;
  }
  if (res.timeToError > p.timeoutSec + 2) {
    *why = "the error came " + std::to_string(res.timeToError) + " s after the death";
    return false;
  }
  weftResult_t async = weftSuccess;
  if (weftCommGetAsyncError(comm, &async) != weftSuccess || async != r) {
    *why = "weftCommGetAsyncError does not report the failure";
    return false;
  }
  std::vector<float> one(1);
  double t = now();
  if (weftAllReduce(one.data(), one.data(), 1, weftFloat32, weftSum, comm, nullptr) ==
          weftSuccess ||
      now() - t > 1.0) {
    *why = "a later call on the broken communicator did not fail at once";
    return false;
  }
  weftComm_t shrunk = nullptr;
  if (weftCommShrink(comm, &p.victim, 1, &shrunk) != weftSuccess) {
    *why = std::string("weftCommShrink failed: ") + weftGetLastError(nullptr);
    return false;
  }
  bool ok = shrunkWorks(shrunk, why);
  weftCommDestroy(shrunk);
  t = now();
  if (weftCommAbort(comm) != weftSuccess) {
    *why = std::string("weftCommAbort failed: ") + weftGetLastError(nullptr);
    return false;
  }
  res.timeToAbort = now() - t;
  if (res.timeToAbort > 1.0) {
    *why = "weftCommAbort took " + std::to_string(res.timeToAbort) + " s";
    return false;
  }
  return ok;
}

}  // namespace

int runRank(Shared* sh, int rank) {
  const Plan& p = sh->plan;
  Result& res = sh->result[rank];
  auto fail = [&](const std::string& why) {
    std::snprintf(res.why, sizeof(res.why), "%s", why.c_str());
    return 1;
  };
  if (rank == 0) {
    if (weftGetUniqueId(&sh->id) != weftSuccess) return fail(weftGetLastError(nullptr));
    sh->idReady.store(1);
  }
  for (int i = 0; i < 20000 && sh->idReady.load() == 0; ++i) usleep(1000);
  weftComm_t comm = nullptr;
  if (weftCommInitRank(&comm, p.nranks, sh->id, rank) != weftSuccess)
    return fail(std::string("init: ") + weftGetLastError(nullptr));
  std::vector<float> s(kCounts[5] * p.nranks, static_cast<float>(rank)), d(s.size());
  std::mt19937_64 rng(p.callSeed);
  const bool watch = p.mode == kStopAbort && rank != p.victim;
  double abortStart = 0, abortEnd = 0;
  std::thread watchdog;
  if (watch)
    watchdog = std::thread([&] {
      // Abort a while after the victim went silent, while we are blocked.
      for (int i = 0; i < 30000 && sh->deathTime.load() == 0; ++i) usleep(1000);
      usleep(200000);
      abortStart = now();
      double none = 0;
      sh->firstAbort.compare_exchange_strong(none, abortStart);
      weftCommAbort(comm);
      abortEnd = now();
    });
  sh->started.fetch_add(1);
  weftResult_t r = weftSuccess;
  double tErr = 0, tCall = 0, t0 = now();
  for (int i = 0; now() - t0 < 60; ++i) {
    if (rank == p.victim && i == p.killAt && p.mode != kKillAny) {
      sh->deathTime.store(now());
      raise(p.mode == kKillSelf ? SIGKILL : SIGSTOP);
      _exit(3);  // continued by mistake: the driver kills stopped victims
    }
    tCall = now();
    r = randomCall(rng, comm, p.nranks, s, d);
    if (r != weftSuccess) {
      tErr = now();
      break;
    }
  }
  const std::string first = weftGetLastError(nullptr);
  std::string why;
  bool ok = false;
  if (r == weftSuccess) {
    why = "every call succeeded for 60 s although rank " + std::to_string(p.victim) + " was gone";
    if (watch) watchdog.join();
  } else if (watch) {
    watchdog.join();
    // Our own abort releases our blocked call ("aborted"); or a peer's abort,
    // which shuts its connections, did so first (weftRemoteError naming it).
    // A call made after that abort is timed from its own start: a rank whose
    // init waited on the stopped victim (it hosts the rendezvous root, and
    // init waits up to 1 s for the root's close) calls late.
    const bool own = r == weftInvalidUsage && first.find("abort") != std::string::npos;
    const double firstAbort = sh->firstAbort.load();
    const double from = own ? abortStart : std::max(firstAbort, tCall);
    res.timeToAbort = std::max(abortEnd - abortStart, tErr - from);
    ok = (own || (r == weftRemoteError && firstAbort > 0 && tErr >= firstAbort)) &&
         res.timeToAbort <= 1.0;
    if (!ok)
      why = "after weftCommAbort from another thread: " + std::string(weftGetErrorString(r)) +
            " after " + std::to_string(res.timeToAbort) + " s";
  } else {
    ok = afterKill(sh, rank, comm, r, tErr, first, &why);
  }
  res.ok = ok;
  if (!ok) return fail(why + " (first error: " + first + ")");
  return 0;
}

}  // namespace fault
