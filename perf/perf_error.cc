// Error reporting for the perf tools (see perf_error.h).
#include "perf_error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
void (*g_exit_hook)(int status) = nullptr;

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}
}  // namespace

void PerfSetExitHook(void (*hook)(int status)) { g_exit_hook = hook; }

void PerfExit(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_exit_hook != nullptr) g_exit_hook(status);
  std::exit(status);
}

void PerfWeftFail(const char* file, int line, weftResult_t result, weftComm_t comm) {
  const char* last = weftGetLastError(comm);
  std::fprintf(stderr, "weft error at %s:%d: %s : %s\n", BaseName(file), line,
               weftGetErrorString(result), last != nullptr ? last : "");
  PerfExit(1);
}
