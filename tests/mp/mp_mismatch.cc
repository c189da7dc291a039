// mp_mismatch: ranks call disagreeing collectives on one communicator (a
// different collective, count, datatype, op or root, a skipped call, small vs
// large calls that take different paths). Every rank must get
// weftInvalidUsage with a sentence containing "collective mismatch" well
// before WEFT_TIMEOUT; the broken communicator must then refuse further calls
// at once. Each case runs on a fresh communicator split from the job's, which
// itself is never used for a mismatched call. Run under weft-run with any
// layout (all local: boards and single copy; WEFT_SHM_DISABLE=1: TCP FIFOs;
// WEFT_ALGO=ring: shared-memory FIFOs with the board check; --mixed: two
// emulated nodes). Prints one line
// per case and "MISMATCH-PASS n cases" on success.
// The point-to-point cases (rank 0 sends, rank 1 receives a different count
// or datatype) are only visible to the receiver: rank 1 must get
// weftInvalidUsage with "point-to-point mismatch" naming rank 0, quickly; the
// small send may complete; other ranks are not involved.
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  // Runs this rank's side of the case on `comm`; returns the first failing result.
  std::function<weftResult_t(weftComm_t comm, int rank, int nranks)> run;
  bool p2p = false;  // rank 0 -> rank 1 only; rank 1 alone must see the mismatch
};

std::vector<char> buf(size_t bytes) { return std::vector<char>(bytes, 1); }

weftResult_t allreduce(weftComm_t c, size_t n, weftDataType_t dt, weftRedOp_t op) {
  size_t es = dt == weftFloat64 || dt == weftInt64 ? 8 : 4;
  std::vector<char> b = buf(n * es);
  return weftAllReduce(b.data(), b.data(), n, dt, op, c, nullptr);
}

// Rank 0 sends `sendCount` x sendType to rank 1, which receives `recvCount` x recvType.
Case p2pCase(const char* name, size_t sendCount, weftDataType_t sendType, size_t recvCount,
             weftDataType_t recvType) {
  return {name,
          [=](weftComm_t c, int r, int) {
            std::vector<char> b = buf(8 * (sendCount > recvCount ? sendCount : recvCount) + 8);
            if (r == 0) return weftSend(b.data(), sendCount, sendType, 1, c, nullptr);
            if (r == 1) return weftRecv(b.data(), recvCount, recvType, 0, c, nullptr);
            return weftSuccess;
          },
          true};
}

std::vector<Case> cases() {
  const size_t big = 300000;  // above the board slot: single copy, or the ring
  return {
      {"kind allreduce/allgather",
       [](weftComm_t c, int r, int n) {
         std::vector<char> s = buf(64), d = buf(64 * n);
         if (r == 1) return weftAllGather(s.data(), d.data(), 4, weftFloat32, c, nullptr);
         return allreduce(c, 4, weftFloat32, weftSum);
       }},
      {"count small",
       [](weftComm_t c, int r, int) { return allreduce(c, r == 1 ? 5 : 4, weftFloat32, weftSum); }},
      {"count large",
       [big](weftComm_t c, int r, int) {
         return allreduce(c, r == 0 ? big + 16 : big, weftFloat32, weftSum);
       }},
      {"count small vs large",
       [big](weftComm_t c, int r, int) {
         return allreduce(c, r == 1 ? big : 4, weftFloat32, weftSum);
       }},
      // Over TCP a call of 64 KiB or more sends its data on a connection per
      // direction, its header on a shared one (WEFT_SOCKET_PER_DIRECTION);
      // the headers must still meet. Root = the highest rank: every receiver
      // reads from a higher rank, whose sends changed connection.
      {"broadcast count small vs large, last root",
       [big](weftComm_t c, int r, int n) {
         std::vector<char> b = buf(big * 4);
         return weftBroadcast(b.data(), b.data(), r == 0 ? 4 : big, weftFloat32, n - 1, c, nullptr);
       }},
      {"datatype", [](weftComm_t c, int r,
                      int) { return allreduce(c, 4, r == 1 ? weftInt32 : weftFloat32, weftSum); }},
      {"op", [](weftComm_t c, int r,
                int) { return allreduce(c, 4, weftFloat32, r == 1 ? weftMax : weftSum); }},
      {"broadcast root",
       [](weftComm_t c, int r, int) {
         std::vector<char> b = buf(64);
         return weftBroadcast(b.data(), b.data(), 16, weftFloat32, r == 1 ? 1 : 0, c, nullptr);
       }},
      {"reduce root large",
       [big](weftComm_t c, int r, int) {
         std::vector<char> s = buf(big * 4), d = buf(big * 4);
         return weftReduce(s.data(), d.data(), big, weftFloat32, weftSum, r == 1 ? 1 : 0, c,
                           nullptr);
       }},
      {"barrier vs allreduce",
       [](weftComm_t c, int r, int) {
         if (r == 1) return weftBarrier(c, nullptr);
         return allreduce(c, 2, weftFloat32, weftSum);
       }},
      {"skipped call",
       [](weftComm_t c, int r, int) {
         // Rank 1 skips the broadcast: its alltoall meets the others' broadcast.
         std::vector<char> s = buf(4096), d = buf(4096);
         if (r != 1) {
           weftResult_t res = weftBroadcast(s.data(), d.data(), 8, weftFloat32, 0, c, nullptr);
           if (res != weftSuccess) return res;
         }
         return weftAllToAll(s.data(), d.data(), 8, weftFloat32, c, nullptr);
       }},
      {"count zero vs nonzero",
       [](weftComm_t c, int r, int) { return allreduce(c, r == 1 ? 0 : 4, weftFloat32, weftSum); }},
      p2pCase("p2p send > recv", 8, weftFloat32, 4, weftFloat32),
      p2pCase("p2p send < recv", 4, weftFloat32, 8, weftFloat32),
      p2pCase("p2p datatype", 4, weftFloat32, 4, weftInt32),
      p2pCase("p2p zero vs nonzero", 0, weftFloat32, 4, weftFloat32),
  };
}

}  // namespace

int main(int argc, char** argv) {
  // --mixed: ranks 0-1 on one emulated node, the rest on another (shared
  // memory and TCP in one communicator: no boards, FIFO headers only).
  if (argc > 1 && std::strcmp(argv[1], "--mixed") == 0) {
    const char* r = std::getenv("WEFT_RANK");
    setenv("WEFT_HOSTID", r != nullptr && std::atoi(r) < 2 ? "mismatch-a" : "mismatch-b", 1);
  }
  weftComm_t world = nullptr;
  if (weftCommInitFromEnv(&world) != weftSuccess) {
    std::printf("FAIL: init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 0;
  weftCommUserRank(world, &rank);
  weftCommCount(world, &nranks);
  if (nranks < 2) {
    std::printf("SKIPPED: needs at least 2 ranks\n");
    return 77;
  }
  int failures = 0, ran = 0;
  double longest = 0;
  for (const Case& k : cases()) {
    weftComm_t comm = nullptr;
    if (weftCommSplit(world, 0, rank, &comm, nullptr) != weftSuccess) {
      std::printf("FAIL rank %d: split: %s\n", rank, weftGetLastError(world));
      return 1;
    }
    Clock::time_point t0 = Clock::now();
    weftResult_t r = k.run(comm, rank, nranks);
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    longest = took > longest ? took : longest;
    std::string why = r == weftSuccess ? "" : weftGetLastError(comm);
    const bool detector = !k.p2p || rank == 1;
    bool ok = took < 5.0;
    if (!detector)  // a p2p sender (its small send may complete) or a bystander
      ok = ok &&
           (r == weftSuccess || (rank == 0 && (r == weftInvalidUsage || r == weftRemoteError)));
    else if (k.p2p)
      ok = ok && r == weftInvalidUsage &&
           why.find("point-to-point mismatch: rank 0 sends") != std::string::npos;
    else
      ok = ok && r == weftInvalidUsage && why.find("collective mismatch") != std::string::npos;
    // Broken for good: the next call fails at once with the same kind of error.
    if (detector && allreduce(comm, 1, weftFloat32, weftSum) != weftInvalidUsage) ok = false;
    std::printf("%s rank %d: %-24s -> %s after %.3f s: %s\n", ok ? "ok  " : "FAIL", rank, k.name,
                weftGetErrorString(r), took, why.c_str());
    failures += ok ? 0 : 1;
    ++ran;
    weftCommAbort(comm);
    // Keep the cases apart: nobody starts the next split before all finished this one.
    if (weftBarrier(world, nullptr) != weftSuccess) {
      std::printf("FAIL rank %d: world barrier: %s\n", rank, weftGetLastError(world));
      return 1;
    }
  }
  weftCommDestroy(world);
  if (failures > 0) {
    std::printf("MISMATCH-FAIL rank %d: %d of %d cases\n", rank, failures, ran);
    return 1;
  }
  std::printf("MISMATCH-PASS rank %d: %d cases, longest time to error %.3f s\n", rank, ran,
              longest);
  return 0;
}
