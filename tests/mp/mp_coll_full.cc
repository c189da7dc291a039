// mp_coll_full: the multi-process test of reduce-scatter, broadcast, reduce,
// all-to-all, send/recv, barrier, group calls, the async forms and comm split,
// for every datatype and op, against references each rank computes on its own.
//   weft-run -n N mp_coll_full [--layout A,B,..] [--large-count C] [--only G,..]
// --layout emulates nodes: "2,2,1" puts ranks 0-1 on node A, 2-3 on node B and
// 4 on node C by setting WEFT_HOSTID before init, so that one communicator
// mixes shared memory and TCP. Prints one line per failing case and exits 1
// when any rank saw a failure.
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mp_common.h"
#include "mp_full.h"
#include "mp_launch.h"
#include "mp_values.h"

namespace {

struct Group {
  const char* name;
  bool (*run)(const mp::Job&, mp::Log&);
};

const Group kGroups[] = {
    {"reducescatter", mp::checkReduceScatterFull},
    {"broadcast", mp::checkBroadcastFull},
    {"reduce", mp::checkReduceFull},
    {"alltoall", mp::checkAllToAllFull},
    {"sendrecv", mp::checkSendRecvFull},
    {"group", mp::checkGroupsFull},
    {"async", mp::checkAsyncFull},
    {"split", mp::checkSplitFull},
};

int usage() {
  std::fprintf(stderr,
               "usage: mp_coll_full [--mpi] [--layout A,B,..] [--large-count C] [--only G,..]\n"
               "                    [--host-alloc none|all|mixed]\n"
               "  --host-alloc M   buffers from weftHostAlloc: none, all, or every other one\n"
               "  --layout A,B,..  ranks per emulated node, in rank order (sets WEFT_HOSTID)\n"
               "  --large-count C  the large odd count of the matrix (default 1000003)\n"
               "  --only G,..      run only these groups:");
  for (const Group& g : kGroups) std::fprintf(stderr, " %s", g.name);
  std::fprintf(stderr, "\n");
  return 2;
}

bool selected(const std::string& only, const char* name) {
  if (only.empty()) return true;
  return ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  bool useMpi = false;
  mp::Job job;
  mp::HostAlloc hostAlloc = mp::HostAlloc::kNone;
  std::string layout, only;
  for (int i = 1; i < argc; ++i) {
    const bool hasValue = i + 1 < argc;
    if (std::strcmp(argv[i], "--mpi") == 0) {
      useMpi = true;
    } else if (std::strcmp(argv[i], "--layout") == 0 && hasValue) {
      layout = argv[++i];
    } else if (std::strcmp(argv[i], "--only") == 0 && hasValue) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--large-count") == 0 && hasValue) {
      char* end = nullptr;
      job.largeCount = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || job.largeCount == 0) return usage();
    } else if (std::strcmp(argv[i], "--host-alloc") == 0 && hasValue) {
      if (!mp::parseHostAlloc(argv[++i], &hostAlloc)) return usage();
    } else {
      return usage();
    }
  }
  if (!layout.empty() && !mp::applyLayout(layout, "mp_coll_full")) return 2;

  std::string why;
  if (!mp::launchInit(useMpi, &argc, &argv, &job.comm, &why)) {
    std::fprintf(stderr, "mp_coll_full: cannot join the job: %s\n", why.c_str());
    mp::launchFinalize(useMpi);
    return 1;
  }
  weftCommUserRank(job.comm, &job.rank);
  weftCommCount(job.comm, &job.nranks);
  mp::setHostAlloc(hostAlloc, job.rank);
  mp::Log log(job.rank);
  if (job.rank == 0 && !mp::dtReducible(weftFloat16))
    std::printf(
        "SKIPPED: half/bfloat16 not reducible in this build (reductions of them untested)\n");
  auto start = std::chrono::steady_clock::now();
  for (const Group& g : kGroups) {
    if (!selected(only, g.name)) continue;
    auto t0 = std::chrono::steady_clock::now();
    const bool alive = g.run(job, log);
    if (job.rank == 0)
      std::printf("rank 0: %-13s %.1f s\n", g.name,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
    if (!alive) {
      log.fail(std::string("stopping after a failed call in group ") + g.name);
      break;
    }
  }

  // Every rank reports the job's verdict, not only its own.
  int32_t mine = log.failures(), total = -1;
  if (weftAllReduce(&mine, &total, 1, weftInt32, weftSum, job.comm, WEFT_STREAM_HOST) !=
      weftSuccess) {
    log.fail(std::string("final verdict allreduce: ") + weftGetLastError(job.comm));
    total = -1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "rank %d of %d (layout %s): %d cases passed, %d failed here, %d on all ranks, %.1f s\n",
      job.rank, job.nranks, layout.empty() ? "default" : layout.c_str(), log.passes(),
      log.failures(), total, seconds);
  std::fflush(stdout);
  if (weftCommDestroy(job.comm) != weftSuccess)
    std::fprintf(stderr, "rank %d: weftCommDestroy: %s\n", job.rank, weftGetLastError(nullptr));
  mp::launchFinalize(useMpi);
  return log.failures() == 0 && total == 0 ? 0 : 1;
}
