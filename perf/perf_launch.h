// How a perf tool joins its job: from the environment (weft-run, WEFT_ROOT_ADDR,
// torchrun variables), from MPI (builds with MPI, under mpirun), or alone as a
// single rank. Also gathers each rank's pid and host for the header.
#ifndef WEFT_PERF_PERF_LAUNCH_H
#define WEFT_PERF_PERF_LAUNCH_H

#include <weft/weft.h>

#include <string>
#include <vector>

struct PerfLaunch {
  weftComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  std::string mode;  // printed in the header, e.g. "env (WEFT_UNIQUE_ID)"
  bool using_mpi = false;
};

struct PerfRankInfo {
  long pid = 0;
  std::string host;
};

// This process's rank as its launcher's environment states it, before any
// communicator exists (0 when unknown); used to print usage errors once.
int PerfLaunchRankHint();
// Creates launch->comm. Prints a message and exits on failure (2 when run by
// mpirun in a build without MPI).
void PerfLaunchInit(int* argc, char*** argv, const char* tool, PerfLaunch* launch);
// Destroys the communicator (and finalizes MPI when it was used).
void PerfLaunchFinish(PerfLaunch* launch);
// Every rank's pid and host, indexed by rank (collective: all ranks call it).
std::vector<PerfRankInfo> PerfGatherRankInfo(const PerfLaunch& launch);

#endif  // WEFT_PERF_PERF_LAUNCH_H
