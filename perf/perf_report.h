// Text output of the perf tools, laid out as nccl-tests prints it: the '#'
// header, the column header, one row per size, and the footer. Rank 0 prints.
#ifndef WEFT_PERF_PERF_REPORT_H
#define WEFT_PERF_PERF_REPORT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf_args.h"
#include "perf_launch.h"

// One measurement: a size, in or out of place.
struct PerfResult {
  size_t bytes = 0;
  size_t count = 0;
  const char* type_name = "";
  const char* op_name = "";
  int root = -1;
  bool in_place = false;
  bool skipped = false;  // not run (no in-place form): printed as N/A
  double time_us = 0;
  double algbw = 0;    // GB/s, 1e9 B/s
  double busbw = 0;    // GB/s
  int64_t wrong = -1;  // -1 when not checked
};

void PerfPrintHeader(const char* tool, const PerfArgs& args, const PerfLaunch& launch,
                     const std::vector<PerfRankInfo>& ranks);
void PerfPrintColumns();
void PerfPrintRow(const PerfResult& out_of_place, const PerfResult& in_place);
// A '#' line in place of rows that could not run (unsupported type or op).
void PerfPrintErrorLine(const char* message);
void PerfPrintFooter(int64_t wrong_total, bool checked, double avg_busbw);

#endif  // WEFT_PERF_PERF_REPORT_H
