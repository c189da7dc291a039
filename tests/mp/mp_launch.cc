// Joining the job for mp_collectives (see mp_launch.h). The MPI path is
// compiled only when weft was built with MPI (WEFT_HAVE_MPI).
#include "mp_launch.h"

#include <cstdio>
#include <cstdlib>

#ifdef WEFT_HAVE_MPI
// The C API only: the C++ bindings of Open MPI and MPICH are not linked.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace mp {

namespace {

// The rank this process will have, known before init (weft-run, mpirun).
int launchRank() {
  for (const char* var : {"WEFT_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return -1;
}

}  // namespace

bool applyLayout(const std::string& layout, const char* program) {
  const int rank = launchRank();
  if (rank < 0) {
    std::fprintf(stderr, "%s: --layout needs the rank before init (WEFT_RANK)\n", program);
    return false;
  }
  int first = 0, node = 0;
  size_t pos = 0;
  while (pos <= layout.size()) {
    size_t comma = layout.find(',', pos);
    if (comma == std::string::npos) comma = layout.size();
    const int size = std::atoi(layout.substr(pos, comma - pos).c_str());
    if (size <= 0) break;
    if (rank < first + size) {
      const std::string id = "mp-layout-node-" + std::to_string(node);
      setenv("WEFT_HOSTID", id.c_str(), 1);
      return true;
    }
    first += size;
    ++node;
    pos = comma + 1;
  }
  std::fprintf(stderr, "%s: rank %d is not placed by --layout %s\n", program, rank, layout.c_str());
  return false;
}

bool launchHasMpi() {
#ifdef WEFT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef WEFT_HAVE_MPI
namespace {

bool initWithMpi(int* argc, char*** argv, weftComm_t* comm, std::string* why) {
  MPI_Init(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  weftUniqueId id;
  int ok = 1;
  if (rank == 0 && weftGetUniqueId(&id) != weftSuccess) {
    *why = std::string("weftGetUniqueId: ") + weftGetLastError(nullptr);
    ok = 0;
  }
  // Everyone learns whether rank 0 has an id before anyone waits for it.
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    if (rank != 0) *why = "rank 0 could not create a unique id";
    return false;
  }
  MPI_Bcast(id.internal, WEFT_UNIQUE_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (weftCommInitRank(comm, size, id, rank) != weftSuccess) {
    *why = std::string("weftCommInitRank: ") + weftGetLastError(nullptr);
    return false;
  }
  return true;
}

}  // namespace
#endif

bool launchInit(bool useMpi, int* argc, char*** argv, weftComm_t* comm, std::string* why) {
  if (useMpi) {
#ifdef WEFT_HAVE_MPI
    return initWithMpi(argc, argv, comm, why);
#else
    (void)argc;
    (void)argv;
    *why = "--mpi given, but this build has no MPI";
    return false;
#endif
  }
  if (weftCommInitFromEnv(comm) != weftSuccess) {
    *why = std::string("weftCommInitFromEnv: ") + weftGetLastError(nullptr);
    return false;
  }
  return true;
}

void launchFinalize(bool useMpi) {
#ifdef WEFT_HAVE_MPI
  if (useMpi) MPI_Finalize();
#else
  (void)useMpi;
#endif
}

}  // namespace mp
