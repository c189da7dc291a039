// Timing and checking of one collective call shape (type, op, count) on this
// rank, and combining per-rank numbers across ranks through weft itself.
#ifndef WEFT_PERF_PERF_MEASURE_H
#define WEFT_PERF_PERF_MEASURE_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>

#include "perf_args.h"
#include "perf_collective.h"

struct PerfCase {
  const PerfCollective* collective = nullptr;
  weftComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  int root = 0;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  size_t count = 0;
  void* send = nullptr;  // at least send_elems(count) elements
  void* recv = nullptr;  // big enough for recv_elems(count) and the in-place layout
  bool nonblocking = false;
  int agg_iters = 1;       // calls per timed iteration, grouped when above 1 (-m)
  void* stream = nullptr;  // -D 1: buffers are device memory, calls go on this stream
};

// The call this rank makes for a case, out of place or in place.
PerfCall PerfMakeCall(const PerfCase& shape, bool in_place);
// Elements the receive allocation needs for a count: the receive buffer, or
// both buffers of the in-place layout, whichever reaches further.
size_t PerfRecvAllocationElems(const PerfCollective& collective, size_t count, int rank,
                               int nranks);
// Runs `warmup` calls, synchronises the ranks with a one-element allreduce,
// then returns the mean time in microseconds of one call over `iters` iterations
// of `agg_iters` back-to-back calls each.
double PerfTimeOnRank(const PerfCase& shape, bool in_place, int warmup, int iters);
// Fills the inputs with check data, runs the collective once and returns the
// number of wrong elements in this rank's receive buffer.
int64_t PerfCheckOnRank(const PerfCase& shape, bool in_place);
// Replaces each of the two times by its combination over ranks (-a mode).
void PerfCombineTimes(const PerfCase& shape, PerfAverage average, double times_us[2]);
// Replaces each of the two counts by its sum over ranks.
void PerfSumOverRanks(const PerfCase& shape, int64_t values[2]);

#endif  // WEFT_PERF_PERF_MEASURE_H
