// Launch detection and communicator creation for the perf tools (see
// perf_launch.h). Order: environment, then MPI, then a single rank.
#include "perf_launch.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef WEFT_PERF_HAVE_MPI
// The C API only: Open MPI's and MPICH's C++ bindings do not build warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include "perf_error.h"

namespace {

// int64 words per rank in the pid/host exchange: pid, then the host name.
constexpr int kInfoWords = 16;

bool HasEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

// Names the variable that selects environment launch, or nullptr.
const char* EnvLaunchVariable() {
  if (HasEnv("WEFT_UNIQUE_ID")) return "WEFT_UNIQUE_ID";
  if (HasEnv("WEFT_ROOT_ADDR")) return "WEFT_ROOT_ADDR";
  if (HasEnv("RANK") && HasEnv("WORLD_SIZE") && HasEnv("MASTER_ADDR")) return "MASTER_ADDR";
  return nullptr;
}

// Names the variable showing that an MPI launcher started us, or nullptr.
const char* MpiLaunchVariable() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (HasEnv(name)) return name;
  }
  return nullptr;
}

void FillRankAndSize(PerfLaunch* launch) {
  PERF_WEFT_CHECK(launch->comm, weftCommUserRank(launch->comm, &launch->rank));
  PERF_WEFT_CHECK(launch->comm, weftCommCount(launch->comm, &launch->nranks));
}

#ifdef WEFT_PERF_HAVE_MPI
[[noreturn]] void MpiAbortHook(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

void InitFromMpi(int* argc, char*** argv, PerfLaunch* launch) {
  MPI_Init(argc, argv);
  PerfSetExitHook(MpiAbortHook);
  launch->using_mpi = true;
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  weftUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (rank == 0) PERF_WEFT_CHECK(nullptr, weftGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  PERF_WEFT_CHECK(nullptr, weftCommInitRank(&launch->comm, size, id, rank));
}
#endif

}  // namespace

int PerfLaunchRankHint() {
  for (const char* name : {"WEFT_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (HasEnv(name)) return std::atoi(std::getenv(name));
  }
  return 0;
}

void PerfLaunchInit(int* argc, char*** argv, const char* tool, PerfLaunch* launch) {
  if (const char* variable = EnvLaunchVariable()) {
    launch->mode = std::string("env (") + variable + ")";
    PERF_WEFT_CHECK(nullptr, weftCommInitFromEnv(&launch->comm));
  } else if (const char* mpi_variable = MpiLaunchVariable()) {
#ifdef WEFT_PERF_HAVE_MPI
    (void)tool;
    (void)mpi_variable;
    launch->mode = "mpi";
    InitFromMpi(argc, argv, launch);
#else
    (void)argc;
    (void)argv;
    std::fprintf(stderr,
                 "%s: started by an MPI launcher (%s is set) but this build has no MPI "
                 "support; rebuild with -DWEFT_WITH_MPI=ON or launch with weft-run -n N\n",
                 tool, mpi_variable);
    PerfExit(2);
#endif
  } else {
    launch->mode = "single rank";
    weftUniqueId id;
    PERF_WEFT_CHECK(nullptr, weftGetUniqueId(&id));
    PERF_WEFT_CHECK(nullptr, weftCommInitRank(&launch->comm, 1, id, 0));
  }
  FillRankAndSize(launch);
}

void PerfLaunchFinish(PerfLaunch* launch) {
  if (launch->comm != nullptr) {
    PERF_WEFT_CHECK(launch->comm, weftCommDestroy(launch->comm));
    launch->comm = nullptr;
  }
#ifdef WEFT_PERF_HAVE_MPI
  if (launch->using_mpi) {
    PerfSetExitHook(nullptr);
    MPI_Finalize();
    launch->using_mpi = false;
  }
#endif
}

std::vector<PerfRankInfo> PerfGatherRankInfo(const PerfLaunch& launch) {
  // Each rank fills its own slot of a zeroed table and a sum-allreduce merges
  // them: tools have no channel besides weft, and allreduce is what they test.
  const size_t words = static_cast<size_t>(launch.nranks) * kInfoWords;
  std::vector<int64_t> mine(words, 0);
  std::vector<int64_t> all(words, 0);
  int64_t* slot = mine.data() + static_cast<size_t>(launch.rank) * kInfoWords;
  slot[0] = static_cast<int64_t>(getpid());
  char host[(kInfoWords - 1) * sizeof(int64_t)] = {};
  gethostname(host, sizeof(host) - 1);
  std::memcpy(slot + 1, host, sizeof(host));
  PERF_WEFT_CHECK(launch.comm, weftAllReduce(mine.data(), all.data(), words, weftInt64, weftSum,
                                             launch.comm, WEFT_STREAM_HOST));
  std::vector<PerfRankInfo> infos(static_cast<size_t>(launch.nranks));
  for (int r = 0; r < launch.nranks; ++r) {
    const int64_t* theirs = all.data() + static_cast<size_t>(r) * kInfoWords;
    char name[sizeof(host) + 1] = {};
    std::memcpy(name, theirs + 1, sizeof(host));
    infos[static_cast<size_t>(r)].pid = static_cast<long>(theirs[0]);
    infos[static_cast<size_t>(r)].host = name;
  }
  return infos;
}
