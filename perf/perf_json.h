// JSON output of the perf tools (-J): an array with one record per size and
// placement, written by rank 0.
#ifndef WEFT_PERF_PERF_JSON_H
#define WEFT_PERF_PERF_JSON_H

#include <cstdio>
#include <string>

#include "perf_report.h"

class PerfJsonWriter {
 public:
  PerfJsonWriter() = default;
  ~PerfJsonWriter();
  PerfJsonWriter(const PerfJsonWriter&) = delete;
  PerfJsonWriter& operator=(const PerfJsonWriter&) = delete;

  // False (with errno set) when the file cannot be created.
  bool Open(const std::string& path, const char* tool, int nranks);
  void Add(const PerfResult& result);
  // Ends the array; false when a write failed.
  bool Close();

 private:
  FILE* file_ = nullptr;
  std::string tool_;
  int nranks_ = 0;
  int records_ = 0;
};

#endif  // WEFT_PERF_PERF_JSON_H
