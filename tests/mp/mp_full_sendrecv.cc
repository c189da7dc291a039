// Blocking point-to-point and barrier across processes. Send/recv: all ten
// datatypes, counts 0, 1, 7 and a large odd count, between every pair of
// ranks in both directions (pairs taken in one global order; the lower rank
// sends first), each message a byte pattern of (sender, receiver, type,
// count). Barrier: rounds in which one rank arrives late and every rank
// leaves a marker file before the barrier and checks all markers after it
// (the ranks of these tests share one machine), some rounds through
// weftBarrierAsync.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {
namespace {

bool exchange(const Job& job, Log& log, weftDataType_t dt, size_t count, int peer) {
  const size_t es = dtSize(dt), bytes = count * es;
  const std::string what = std::string("send/recv ") + dtName(dt) +
                           " count=" + std::to_string(count) + " with rank " + std::to_string(peer);
  const uint64_t outSeed = seedOf(31, job.rank, peer, dt * 131 + count);
  const uint64_t inSeed = seedOf(31, peer, job.rank, dt * 131 + count);
  Buffer send(bytes, 1 * es), recv(bytes, 3 * es);
  fillPattern(send.data(), bytes, outSeed);
  fillPattern(recv.data(), bytes, seedOf(32, job.rank));
  weftResult_t r;
  if (job.rank < peer) {
    r = weftSend(send.data(), count, dt, peer, job.comm, WEFT_STREAM_HOST);
    if (r == weftSuccess) r = weftRecv(recv.data(), count, dt, peer, job.comm, WEFT_STREAM_HOST);
  } else {
    r = weftRecv(recv.data(), count, dt, peer, job.comm, WEFT_STREAM_HOST);
    if (r == weftSuccess) r = weftSend(send.data(), count, dt, peer, job.comm, WEFT_STREAM_HOST);
  }
  if (!callOk(job, log, what, r)) return false;
  bool ok = true;
  std::string diff = compareElems(dt, recv.data(), pattern(bytes, inSeed).data(), count);
  if (!diff.empty()) {
    log.fail(what + ": received " + diff);
    ok = false;
  }
  diff = compareElems(dt, send.data(), pattern(bytes, outSeed).data(), count);
  if (!diff.empty()) {
    log.fail(what + ": sendbuff was modified: " + diff);
    ok = false;
  }
  if (!recv.guardIntact()) {
    log.fail(what + ": wrote past the end of recvbuff");
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

std::string markerPath(uint64_t token, int round, int rank) {
  const char* dir = std::getenv("TMPDIR");
  char name[160];
  std::snprintf(name, sizeof(name), "%s/weft-mp-barrier-%016llx-%d-%d", dir && *dir ? dir : "/tmp",
                static_cast<unsigned long long>(token), round, rank);
  return name;
}

}  // namespace

bool barrierCase(const Job& job, Log& log, int rounds, int asyncEvery) {
  static std::atomic<uint64_t> counter{0};
  uint64_t token = seedOf(static_cast<uint64_t>(getpid()),
                          std::chrono::steady_clock::now().time_since_epoch().count(), counter++);
  if (!callOk(job, log, "barrier: broadcasting the marker token",
              weftBroadcast(&token, &token, 1, weftUint64, 0, job.comm, WEFT_STREAM_HOST)))
    return false;
  bool ok = true;
  for (int k = 0; k < rounds; ++k) {
    const bool async = asyncEvery > 0 && k % asyncEvery == asyncEvery - 1;
    const std::string what =
        std::string(async ? "weftBarrierAsync" : "weftBarrier") + " round " + std::to_string(k);
    if (job.rank == k % job.nranks) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (FILE* f = std::fopen(markerPath(token, k, job.rank).c_str(), "w")) {
      std::fclose(f);
    } else {
      log.fail(what + ": cannot create " + markerPath(token, k, job.rank));
      ok = false;
    }
    weftResult_t r;
    if (async) {
      weftRequest_t req = nullptr;
      r = weftBarrierAsync(job.comm, &req);
      if (r == weftSuccess) r = weftWait(&req);
    } else {
      r = weftBarrier(job.comm, WEFT_STREAM_HOST);
    }
    if (!callOk(job, log, what, r)) return false;
    for (int p = 0; p < job.nranks; ++p) {
      if (access(markerPath(token, k, p).c_str(), F_OK) == 0) continue;
      log.fail(what + ": returned before rank " + std::to_string(p) + " entered it");
      ok = false;
    }
  }
  // Nobody looks at the markers after this barrier.
  weftResult_t r = weftBarrier(job.comm, WEFT_STREAM_HOST);
  for (int k = 0; k < rounds; ++k) std::remove(markerPath(token, k, job.rank).c_str());
  if (!callOk(job, log, "final barrier", r)) return false;
  if (ok) log.pass();
  return true;
}

bool checkSendRecvFull(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, job.largeCount};
  for (weftDataType_t dt : kAllTypes)
    for (size_t count : counts)
      for (int a = 0; a < job.nranks; ++a)
        for (int b = a + 1; b < job.nranks; ++b) {
          if (job.rank != a && job.rank != b) continue;
          if (!exchange(job, log, dt, count, job.rank == a ? b : a)) return false;
        }
  return barrierCase(job, log, 2 * job.nranks + 2, 3);
}

}  // namespace mp
