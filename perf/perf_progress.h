// One-line progress on stderr while a perf tool sweeps its sizes: shown by
// rank 0 only and only when stderr is a terminal, so pipes, mpirun's
// forwarding and CI logs get nothing extra. The line is cleared before each
// result row is printed, so rows never mix with it.
#pragma once

#include <cstddef>

class PerfProgress {
 public:
  PerfProgress(bool rank0, size_t total);
  // Marks the start of one more case of `total` ("float sum 1048576 B").
  void Step(const char* what);
  // Clears the line (before a row is printed, and at the end).
  void Clear();

 private:
  bool shown_;
  size_t total_;
  size_t done_ = 0;
  bool dirty_ = false;
};
