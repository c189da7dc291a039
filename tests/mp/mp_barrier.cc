// mp_barrier: no rank leaves weftBarrier before the last one entered. Each
// round one rank (round % n) enters 30 ms late; every rank notes when it
// left, and an allgather then compares: the earliest exit must come after
// the late rank's entry (CLOCK_MONOTONIC is one clock for every process of
// the machine). Run with more ranks than the barrier's radix (8) so that it
// takes several steps, with the call check on (the barrier is the check's
// steps) and off (its own one-byte messages).
//   weft-run -n 12 mp_barrier
#include <time.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdio>
#include <vector>

namespace {

double nowSec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, n = 1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &n);
  int failures = 0;
  const int rounds = 2 * n;
  for (int round = 0; round < rounds; ++round) {
    const int late = round % n;
    double times[2] = {0, 0};  // [0]: when this rank entered, [1]: when it left
    if (rank == late) usleep(30000);
    times[0] = nowSec();
    if (weftBarrier(comm, nullptr) != weftSuccess) {
      std::printf("FAIL rank %d: barrier: %s\n", rank, weftGetLastError(comm));
      return 1;
    }
    times[1] = nowSec();
    std::vector<double> all(2 * static_cast<size_t>(n));
    if (weftAllGather(times, all.data(), 2, weftFloat64, comm, nullptr) != weftSuccess) {
      std::printf("FAIL rank %d: allgather: %s\n", rank, weftGetLastError(comm));
      return 1;
    }
    double lastEntry = 0, firstExit = 1e300;
    int early = -1;
    for (int r = 0; r < n; ++r) {
      lastEntry = all[2 * r] > lastEntry ? all[2 * r] : lastEntry;
      if (all[2 * r + 1] < firstExit) {
        firstExit = all[2 * r + 1];
        early = r;
      }
    }
    if (firstExit < lastEntry) {
      ++failures;
      if (rank == 0)
        std::printf("FAIL round %d: rank %d left %.3f ms before rank %d entered\n", round, early,
                    (lastEntry - firstExit) * 1e3, late);
    }
  }
  weftCommDestroy(comm);
  std::printf("rank %d: %s (%d rounds)\n", rank, failures == 0 ? "PASS" : "FAIL", rounds);
  return failures == 0 ? 0 : 1;
}
