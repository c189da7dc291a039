// nccl-tests' size conventions (see perf_shapes.h).
#include "perf_shapes.h"

#include <algorithm>

double PerfBusBwOne(int /*nranks*/) { return 1.0; }
double PerfBusBwRing(int nranks) { return 1.0 * (nranks - 1) / nranks; }
double PerfBusBwAllReduce(int nranks) { return 2.0 * (nranks - 1) / nranks; }

size_t PerfCountOfBuffer(size_t bytes, size_t elem_size, int /*nranks*/) {
  return std::max<size_t>(1, bytes / elem_size);
}
size_t PerfBytesOfBuffer(size_t count, size_t elem_size, int /*nranks*/) {
  return count * elem_size;
}
size_t PerfCountPerRank(size_t bytes, size_t elem_size, int nranks) {
  return std::max<size_t>(1, bytes / elem_size / static_cast<size_t>(nranks));
}
size_t PerfBytesAllRanks(size_t count, size_t elem_size, int nranks) {
  return count * elem_size * static_cast<size_t>(nranks);
}

size_t PerfElemsCount(size_t count, int /*nranks*/) { return count; }
size_t PerfElemsAllRanks(size_t count, int nranks) { return count * static_cast<size_t>(nranks); }
size_t PerfOffsetZero(size_t /*count*/, int /*rank*/) { return 0; }
size_t PerfOffsetRankBlock(size_t count, int rank) { return count * static_cast<size_t>(rank); }
