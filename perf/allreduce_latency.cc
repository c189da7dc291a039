// allreduce_latency: the time of one allreduce call, not of calls back to
// back. all_reduce_perf (like nccl-tests) times a loop of calls, and a ring
// overlaps consecutive calls (a rank starts the next as soon as it finished
// its part), which hides part of its 2(n-1)-hop latency; this tool separates
// calls with a barrier and reports, over iterations, the median of the
// slowest rank's time. The barrier releases ranks up to one hop apart, which
// biases every algorithm alike.
//
//   allreduce_latency [-b BYTES] [-n ITERS] [-w WARMUP]   (launched like the *_perf tools)
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "allreduce_latency: %s: %s\n", what, weftGetLastError(nullptr));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 8;
  int iters = 200, warmup = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "-b") == 0) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "-n") == 0) iters = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "-w") == 0) warmup = std::atoi(argv[i + 1]);
  }
  size_t count = std::max<size_t>(1, bytes / sizeof(float));
  weftComm_t comm;
  if (weftCommInitFromEnv(&comm) != weftSuccess) return fail("init");
  int rank = 0, nranks = 1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  std::vector<float> buf(count, 1.0f);
  std::vector<double> slowest;  // per iteration, the slowest rank's microseconds
  for (int i = 0; i < warmup + iters; ++i) {
    if (weftBarrier(comm, nullptr) != weftSuccess) return fail("barrier");
    auto t0 = std::chrono::steady_clock::now();
    if (weftAllReduce(buf.data(), buf.data(), count, weftFloat32, weftSum, comm, nullptr) !=
        weftSuccess)
      return fail("allreduce");
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (weftAllReduce(&us, &us, 1, weftFloat64, weftMax, comm, nullptr) != weftSuccess)
      return fail("allreduce of the times");
    if (i >= warmup) slowest.push_back(us);
  }
  std::sort(slowest.begin(), slowest.end());
  if (rank == 0)
    std::printf("# allreduce_latency: %d ranks, %zu B, %d iterations\n%12zu %12.1f %12.1f %12.1f\n",
                nranks, count * sizeof(float), iters, count * sizeof(float),
                slowest[slowest.size() / 2], slowest[slowest.size() / 10],
                slowest[slowest.size() * 9 / 10]);
  weftCommDestroy(comm);
  return 0;
}
