// The size conventions nccl-tests uses, shared by the perf tools: bus-bandwidth
// factors, how a requested byte size maps to a count and back, how large the
// buffers are, and where in-place buffers sit. A tool picks the ones that
// describe its collective instead of writing them again.
#ifndef WEFT_PERF_PERF_SHAPES_H
#define WEFT_PERF_PERF_SHAPES_H

#include <cstddef>

// busbw = algbw * factor: 1 (broadcast, reduce, sendrecv), (n-1)/n (allgather,
// reduce-scatter, alltoall), 2(n-1)/n (allreduce).
double PerfBusBwOne(int nranks);
double PerfBusBwRing(int nranks);
double PerfBusBwAllReduce(int nranks);

// "size" is one rank's buffer: count = size / elem_size (at least 1).
size_t PerfCountOfBuffer(size_t bytes, size_t elem_size, int nranks);
size_t PerfBytesOfBuffer(size_t count, size_t elem_size, int nranks);
// "size" is the whole nranks-block buffer: count = size / elem_size / nranks (at least 1).
size_t PerfCountPerRank(size_t bytes, size_t elem_size, int nranks);
size_t PerfBytesAllRanks(size_t count, size_t elem_size, int nranks);

// Buffer lengths in elements: count, or count per rank.
size_t PerfElemsCount(size_t count, int nranks);
size_t PerfElemsAllRanks(size_t count, int nranks);
// In-place offsets in elements: the buffer's start, or this rank's block.
size_t PerfOffsetZero(size_t count, int rank);
size_t PerfOffsetRankBlock(size_t count, int rank);

#endif  // WEFT_PERF_PERF_SHAPES_H
