// Progress line of the perf tools (see perf_progress.h).
#include "perf_progress.h"

#include <unistd.h>

#include <cstdio>

PerfProgress::PerfProgress(bool rank0, size_t total)
    : shown_(rank0 && isatty(STDERR_FILENO) == 1), total_(total) {}

void PerfProgress::Step(const char* what) {
  ++done_;
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done_, total_, what);
  std::fflush(stderr);
  dirty_ = true;
}

void PerfProgress::Clear() {
  if (!dirty_) return;
  std::fflush(stdout);
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  dirty_ = false;
}
