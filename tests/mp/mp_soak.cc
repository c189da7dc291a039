// mp_soak: a randomized soak. Every rank draws the same seeded sequence of
// calls (allreduce, allgather, reduce-scatter, broadcast, reduce, all-to-all,
// barrier, a send/recv ring in a group) with random datatype, op, count (0 to
// ~150k elements, mostly small), root and in-place choice, runs each one and
// compares the whole result with a reference computed locally from the
// per-rank input formulas of mp_values.h. Any wrong element or failed call
// fails the run. Prints the seed and "SOAK-PASS <calls> calls, 0 wrong".
//   weft-run -n N mp_soak [--iters I] [--seed S] [--mixed]
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mp_values.h"

namespace {

using mp::dtSize;

struct Ctx {
  weftComm_t comm;
  int me, n;
  uint64_t iter;
};

size_t drawCount(std::mt19937_64& rng) {
  const unsigned band = static_cast<unsigned>(rng() % 10);
  if (band < 6) return rng() % 300;  // boards / one-shot
  if (band < 9) return 300 + rng() % 20000;
  return 20000 + rng() % 130000;  // ring / single copy
}

// "" when right, else what was wrong.
std::string check(const Ctx&, weftDataType_t dt, const void* got, const void* want, size_t n) {
  return mp::compareElems(dt, got, want, n);
}

std::string runOne(const Ctx& c, std::mt19937_64& rng, int kind, std::string* what) {
  weftDataType_t dt = mp::kAllTypes[rng() % 10];
  weftRedOp_t op = mp::kAllOps[rng() % 5];
  const size_t count = drawCount(rng);
  const int root = static_cast<int>(rng() % c.n);
  const bool inPlace = rng() % 2 == 0;
  const bool reduces = kind == 0 || kind == 2 || kind == 4;
  if (reduces && !mp::dtReducible(dt)) dt = weftFloat32;
  const size_t es = dtSize(dt), n = static_cast<size_t>(c.n), me = static_cast<size_t>(c.me);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "call %llu: kind %d, %zu x %s, op %d, root %d%s",
                static_cast<unsigned long long>(c.iter), kind, count, mp::dtName(dt),
                static_cast<int>(op), root, inPlace ? ", in place" : "");
  *what = buf;
  std::vector<char> s(n * count * es + 1), d(n * count * es + 1), want(n * count * es + 1);
  weftResult_t r = weftSuccess;
  std::string bad;
  switch (kind) {
    case 0: {  // allreduce
      mp::fillReduceInput(dt, op, c.me, 0, count, s.data());
      void* out = inPlace ? s.data() : d.data();
      r = weftAllReduce(s.data(), out, count, dt, op, c.comm, nullptr);
      mp::fillReduceExpected(dt, op, c.n, 0, count, want.data());
      if (r == weftSuccess) bad = check(c, dt, out, want.data(), count);
      break;
    }
    case 1: {  // allgather
      char* mine = inPlace ? d.data() + me * count * es : s.data();
      mp::fillPattern(mine, count * es, mp::seedOf(c.iter, me));
      r = weftAllGather(mine, d.data(), count, dt, c.comm, nullptr);
      for (size_t p = 0; p < n; ++p)
        mp::fillPattern(want.data() + p * count * es, count * es, mp::seedOf(c.iter, p));
      if (r == weftSuccess) bad = check(c, weftUint8, d.data(), want.data(), n * count * es);
      break;
    }
    case 2: {  // reduce-scatter
      mp::fillReduceInput(dt, op, c.me, 0, n * count, s.data());
      void* out = inPlace ? s.data() + me * count * es : d.data();
      r = weftReduceScatter(s.data(), out, count, dt, op, c.comm, nullptr);
      mp::fillReduceExpected(dt, op, c.n, me * count, count, want.data());
      if (r == weftSuccess) bad = check(c, dt, out, want.data(), count);
      break;
    }
    case 3: {  // broadcast
      if (c.me == root) mp::fillPattern(s.data(), count * es, mp::seedOf(c.iter, root));
      void* out = inPlace ? s.data() : d.data();
      r = weftBroadcast(s.data(), out, count, dt, root, c.comm, nullptr);
      mp::fillPattern(want.data(), count * es, mp::seedOf(c.iter, root));
      if (r == weftSuccess) bad = check(c, weftUint8, out, want.data(), count * es);
      break;
    }
    case 4: {  // reduce
      mp::fillReduceInput(dt, op, c.me, 0, count, s.data());
      void* out = inPlace ? s.data() : d.data();
      r = weftReduce(s.data(), out, count, dt, op, root, c.comm, nullptr);
      mp::fillReduceExpected(dt, op, c.n, 0, count, want.data());
      if (r == weftSuccess && c.me == root) bad = check(c, dt, out, want.data(), count);
      break;
    }
    case 5: {  // all-to-all
      for (size_t p = 0; p < n; ++p)
        mp::fillPattern(s.data() + p * count * es, count * es, mp::seedOf(c.iter, me, p));
      r = weftAllToAll(s.data(), d.data(), count, dt, c.comm, nullptr);
      for (size_t p = 0; p < n; ++p)
        mp::fillPattern(want.data() + p * count * es, count * es, mp::seedOf(c.iter, p, me));
      if (r == weftSuccess) bad = check(c, weftUint8, d.data(), want.data(), n * count * es);
      break;
    }
    case 6:
      r = weftBarrier(c.comm, nullptr);
      break;
    default: {  // send to next, receive from previous, fused in a group
      const int next = (c.me + 1) % c.n, prev = (c.me + c.n - 1) % c.n;
      mp::fillPattern(s.data(), count * es, mp::seedOf(c.iter, me, 77));
      weftGroupStart();
      weftSend(s.data(), count, dt, next, c.comm, nullptr);
      weftRecv(d.data(), count, dt, prev, c.comm, nullptr);
      r = weftGroupEnd();
      mp::fillPattern(want.data(), count * es, mp::seedOf(c.iter, prev, 77));
      if (r == weftSuccess) bad = check(c, weftUint8, d.data(), want.data(), count * es);
      break;
    }
  }
  if (r != weftSuccess)
    return std::string("returned ") + weftGetErrorString(r) + ": " + weftGetLastError(nullptr);
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 2000;
  unsigned long long seed = 20261130;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mixed")) {
      // Two emulated nodes (lower and upper half of the ranks): shm and TCP mixed.
      const char* r = std::getenv("WEFT_RANK");
      const char* n = std::getenv("WEFT_WORLD_SIZE");
      bool low = r && n && std::atoi(r) < (std::atoi(n) + 1) / 2;
      setenv("WEFT_HOSTID", low ? "soak-a" : "soak-b", 1);
    } else if (i + 1 < argc && !std::strcmp(argv[i], "--iters")) {
      iters = std::atoi(argv[++i]);
    } else if (i + 1 < argc && !std::strcmp(argv[i], "--seed")) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    }
  }
  Ctx c{nullptr, 0, 1, 0};
  if (weftCommInitFromEnv(&c.comm) != weftSuccess) {
    std::printf("FAIL: init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  weftCommUserRank(c.comm, &c.me);
  weftCommCount(c.comm, &c.n);
  if (c.me == 0) std::printf("mp_soak: %d ranks, %d calls, seed %llu\n", c.n, iters, seed);
  std::mt19937_64 rng(seed);
  int wrong = 0, perKind[8] = {};
  for (int i = 0; i < iters; ++i) {
    c.iter = static_cast<uint64_t>(i);
    const int kind = static_cast<int>(rng() % 8);
    std::string what;
    std::string bad = runOne(c, rng, kind, &what);
    ++perKind[kind];
    if (bad.empty()) continue;
    ++wrong;
    std::printf("FAIL rank %d: %s: %s\n", c.me, what.c_str(), bad.c_str());
    if (bad.rfind("returned", 0) == 0) break;  // the communicator may be broken
  }
  weftCommDestroy(c.comm);
  if (wrong > 0) {
    std::printf("SOAK-FAIL rank %d: %d wrong (seed %llu)\n", c.me, wrong, seed);
    return 1;
  }
  std::printf(
      "SOAK-PASS rank %d: %d calls (allreduce %d, allgather %d, reducescatter %d, "
      "broadcast %d, reduce %d, alltoall %d, barrier %d, sendrecv %d), 0 wrong\n",
      c.me, iters, perKind[0], perKind[1], perKind[2], perKind[3], perKind[4], perKind[5],
      perKind[6], perKind[7]);
  return 0;
}
