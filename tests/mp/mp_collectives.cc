// mp_collectives: the multi-process correctness test. Run by ctest as
//   weft-run -n N mp_collectives [--large-count C] [--huge-mib M]
//   mpirun -np N mp_collectives --mpi [...]          (builds with MPI)
// Each rank checks allreduce, allgather, the async forms, buffers reused at
// once after a call, calls overlapping from two threads (refused), cross-rank bitwise
// reproducibility, and the ops of weftRedOpCreatePreMulSum, against references it
// computes on its own, prints one line per failing case, and exits 1 when any rank saw a failure.
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mp_common.h"
#include "mp_launch.h"

namespace {

bool parseCount(const char* text, size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) return false;
  *out = static_cast<size_t>(v);
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: mp_collectives [--mpi] [--large-count C] [--huge-mib M]\n"
               "                      [--host-alloc none|all|mixed]\n"
               "  --host-alloc M   buffers from weftHostAlloc: none, all, or every other one\n"
               "  --mpi            join through MPI (mpirun) instead of weft-run's environment\n"
               "  --large-count C  the large odd count of the test matrix (default 1000003)\n"
               "  --huge-mib M     MiB of the single big float-sum allreduce (default 64)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool useMpi = false;
  mp::Job job;
  mp::HostAlloc hostAlloc = mp::HostAlloc::kNone;
  size_t hugeMiB = 64;
  for (int i = 1; i < argc; ++i) {
    const bool hasValue = i + 1 < argc;
    if (std::strcmp(argv[i], "--mpi") == 0) {
      useMpi = true;
    } else if (std::strcmp(argv[i], "--large-count") == 0 && hasValue) {
      if (!parseCount(argv[++i], &job.largeCount)) return usage();
    } else if (std::strcmp(argv[i], "--huge-mib") == 0 && hasValue) {
      if (!parseCount(argv[++i], &hugeMiB)) return usage();
    } else if (std::strcmp(argv[i], "--host-alloc") == 0 && hasValue) {
      if (!mp::parseHostAlloc(argv[++i], &hostAlloc)) return usage();
    } else {
      return usage();
    }
  }
  job.hugeBytes = hugeMiB << 20;

  std::string why;
  if (!mp::launchInit(useMpi, &argc, &argv, &job.comm, &why)) {
    std::fprintf(stderr, "mp_collectives: cannot join the job: %s\n", why.c_str());
    mp::launchFinalize(useMpi);
    return 1;
  }
  weftCommUserRank(job.comm, &job.rank);
  weftCommCount(job.comm, &job.nranks);
  mp::setHostAlloc(hostAlloc, job.rank);
  mp::Log log(job.rank);
  auto start = std::chrono::steady_clock::now();

  mp::checkAllReduce(job, log);
  mp::checkAllGather(job, log);
  mp::checkAsync(job, log);
  mp::checkDeterminism(job, log);
  mp::checkReuse(job, log);
  mp::checkOverlap(job, log);
  mp::checkPreMulSum(job, log);

  // Every rank reports the job's verdict, not only its own.
  int32_t mine = log.failures(), total = -1;
  if (weftAllReduce(&mine, &total, 1, weftInt32, weftSum, job.comm, WEFT_STREAM_HOST) !=
      weftSuccess) {
    log.fail(std::string("final verdict allreduce: ") + weftGetLastError(job.comm));
    total = -1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const char* algo = std::getenv("WEFT_ALGO");
  std::string how = std::string(useMpi ? "mpirun" : "weft-run") + (algo ? ", WEFT_ALGO=" : "") +
                    (algo ? algo : "");
  std::printf("rank %d of %d (%s): %d cases passed, %d failed here, %d on all ranks, %.1f s\n",
              job.rank, job.nranks, how.c_str(), log.passes(), log.failures(), total, seconds);
  std::fflush(stdout);
  if (weftCommDestroy(job.comm) != weftSuccess)
    std::fprintf(stderr, "rank %d: weftCommDestroy: %s\n", job.rank, weftGetLastError(nullptr));
  mp::launchFinalize(useMpi);
  return log.failures() == 0 && total == 0 ? 0 : 1;
}
