// Several ranks in one perf-tool process (-t and -g, as nccl-tests runs
// threads x GPUs per process): each rank is a thread with its own
// communicator, so a process of a P-process job runs ranks p*R .. p*R+R-1 of
// P*R.
#ifndef WEFT_PERF_PERF_THREADS_H
#define WEFT_PERF_PERF_THREADS_H

#include <functional>

#include "perf_launch.h"

// Process rank 0 makes a unique id and broadcasts it over `process` (the
// communicator of one rank per process); then `per_process` threads each join
// the larger communicator with weftCommInitRank, run `body` on it, and destroy
// it. Returns the largest status a body returned. Exits on a failed init.
int PerfRunThreadRanks(const PerfLaunch& process, int per_process,
                       const std::function<int(const PerfLaunch&)>& body);

#endif  // WEFT_PERF_PERF_THREADS_H
