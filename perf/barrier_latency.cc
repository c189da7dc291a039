// barrier_latency: the mean time of weftBarrier, over a loop of calls back
// to back (as OSU's osu_barrier measures MPI_Barrier), the slowest rank's.
//
//   barrier_latency [-n ITERS] [-w WARMUP]   (launched like the *_perf tools)
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int fail(weftComm_t comm, const char* what) {
  std::fprintf(stderr, "barrier_latency: %s: %s\n", what, weftGetLastError(comm));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 1000, warmup = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "-n") == 0) iters = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "-w") == 0) warmup = std::atoi(argv[i + 1]);
  }
  if (iters < 1) iters = 1;
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) return fail(nullptr, "init");
  int rank = 0, nranks = 1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  for (int i = 0; i < warmup; ++i)
    if (weftBarrier(comm, nullptr) != weftSuccess) return fail(comm, "barrier");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    if (weftBarrier(comm, nullptr) != weftSuccess) return fail(comm, "barrier");
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      iters;
  if (weftAllReduce(&us, &us, 1, weftFloat64, weftMax, comm, nullptr) != weftSuccess)
    return fail(comm, "allreduce of the times");
  if (rank == 0)
    std::printf(
        "# barrier_latency: %d ranks, %d iterations\n# mean us per barrier (slowest "
        "rank)\n%12.1f\n",
        nranks, iters, us);
  weftCommDestroy(comm);
  return 0;
}
