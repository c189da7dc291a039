// mp_kill: a rank dies in the middle of a job. Run by kill_rank_test.sh as
//   weft-run -n N mp_kill --die sigkill|exit|stop [--victim R] [--count C]
// Every rank runs allreduces; the victim (rank 1 by default) dies just before
// the 3rd, by SIGKILL (as kill -9 would) or by _exit(0) (a rank that leaves
// without a word), or hangs there (SIGSTOP: its sockets stay open, so only the
// timeout can tell). Each survivor's 3rd allreduce must fail with weftRemoteError
// or weftTimeout within WEFT_TIMEOUT (+2 s), the communicator must then report
// the error, fail the next call at once, and abort quickly. Survivors print
// one SURVIVOR-OK line, or UNEXPECTED lines, and exit 1 (their job failed).
#include <signal.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int usage() {
  std::fprintf(stderr, "usage: mp_kill --die sigkill|exit|stop [--victim R] [--count C]\n");
  return 2;
}

// After the failed 3rd allreduce: the communicator must be broken for good.
void checkBroken(weftComm_t comm, int rank, weftResult_t first, std::vector<float>& buf) {
  weftResult_t async = weftSuccess;
  if (weftCommGetAsyncError(comm, &async) != weftSuccess || async != first)
    std::printf("UNEXPECTED rank %d: weftCommGetAsyncError reports %d, the failed call %d\n", rank,
                static_cast<int>(async), static_cast<int>(first));
  Clock::time_point t = Clock::now();
  weftResult_t again =
      weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat, weftSum, comm, WEFT_STREAM_HOST);
  if (again == weftSuccess || since(t) > 1.0)
    std::printf("UNEXPECTED rank %d: the next allreduce returned %d after %.2f s\n", rank,
                static_cast<int>(again), since(t));
  t = Clock::now();
  if (weftCommAbort(comm) != weftSuccess || since(t) > 2.0)
    std::printf("UNEXPECTED rank %d: weftCommAbort failed or took %.2f s: %s\n", rank, since(t),
                weftGetLastError(nullptr));
}

}  // namespace

int main(int argc, char** argv) {
  const char* die = nullptr;
  int victim = 1;
  size_t count = 1 << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--die") == 0)
      die = argv[i + 1];
    else if (std::strcmp(argv[i], "--victim") == 0)
      victim = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--count") == 0)
      count = std::strtoull(argv[i + 1], nullptr, 10);
    else
      return usage();
  }
  if (argc % 2 == 0 || die == nullptr ||
      (std::strcmp(die, "sigkill") && std::strcmp(die, "exit") && std::strcmp(die, "stop")))
    return usage();
  const double timeout = std::getenv("WEFT_TIMEOUT") ? std::atof(std::getenv("WEFT_TIMEOUT")) : 300;

  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("UNEXPECTED: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  std::vector<float> buf(count);
  for (int iter = 0; iter < 5; ++iter) {
    if (rank == victim && iter == 2) {
      std::printf("DYING rank %d: %s before allreduce #3\n", rank, die);
      std::fflush(stdout);
      if (std::strcmp(die, "sigkill") == 0) raise(SIGKILL);
      if (std::strcmp(die, "stop") == 0) raise(SIGSTOP);  // weft-run SIGKILLs it in the end
      _exit(0);
    }
    for (size_t i = 0; i < count; ++i) buf[i] = static_cast<float>(rank + 1);
    Clock::time_point t = Clock::now();
    weftResult_t r =
        weftAllReduce(buf.data(), buf.data(), count, weftFloat, weftSum, comm, WEFT_STREAM_HOST);
    const double took = since(t);
    if (iter < 2) {
      const float want = static_cast<float>(nranks * (nranks + 1) / 2);
      if (r != weftSuccess || buf[0] != want || buf[count - 1] != want) {
        std::printf("UNEXPECTED rank %d: allreduce #%d before the death: %s\n", rank, iter + 1,
                    r == weftSuccess ? "wrong result" : weftGetLastError(comm));
        return 1;
      }
      continue;
    }
    const bool expected = (r == weftRemoteError || r == weftTimeout) && took <= timeout + 2;
    std::printf("%s rank %d: allreduce #%d returned %s after %.2f s: %s\n",
                expected ? "SURVIVOR-OK" : "UNEXPECTED", rank, iter + 1, weftGetErrorString(r),
                took, r == weftSuccess ? "" : weftGetLastError(comm));
    if (r != weftSuccess) checkBroken(comm, rank, r, buf);
    std::fflush(stdout);
    return 1;
  }
  std::printf("UNEXPECTED rank %d: every allreduce succeeded without rank %d\n", rank, victim);
  return 1;
}
