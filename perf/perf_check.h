// Check data for the perf tools: per-rank input values chosen so that every
// reduction is exact in every datatype (small integers; products of 1s and a
// rare 2), their reduction over ranks, and typed fill/compare helpers.
#ifndef WEFT_PERF_PERF_CHECK_H
#define WEFT_PERF_PERF_CHECK_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>

struct PerfCollective;
struct PerfCall;

// The value rank `rank` puts at element `index` of its input for a check of op.
int64_t PerfInputValue(weftRedOp_t op, int rank, size_t index);
// op applied over PerfInputValue(op, r, index) for r in [0, nranks).
int64_t PerfReducedValue(weftRedOp_t op, int nranks, size_t index);

// buf[i] = PerfInputValue(op, rank, i) for i in [0, count).
void PerfFillInput(void* buf, size_t count, weftDataType_t type, weftRedOp_t op, int rank);
// Fills buf with data for timing: small finite values in every datatype,
// pseudo-random with a period of 65521 elements (a prime), so no two pages
// less than 256 MiB apart hold the same bytes. Zero-filled or repeating pages can be backed
// by one shared page (the zero page, or a hypervisor's page merging): reads
// then hit one cached page and each write takes a copy-on-write fault, so
// the timing would measure the host's memory tricks instead of the library.
void PerfFillTiming(void* buf, size_t count, weftDataType_t type, int rank);
// buf[i] = value for i in [0, count).
void PerfFillConstant(void* buf, size_t count, weftDataType_t type, int64_t value);
// Elements of call.recv (collective.recv_elems of them) that differ from
// collective.expected(i, call).
int64_t PerfCountWrong(const PerfCollective& collective, const PerfCall& call);

#endif  // WEFT_PERF_PERF_CHECK_H
