// Error reporting for the perf tools: one macro that checks a weft call and,
// on failure, prints where it failed with weft's own explanation and exits.
#ifndef WEFT_PERF_PERF_ERROR_H
#define WEFT_PERF_PERF_ERROR_H

#include <weft/weft.h>

// Prints "weft error at file:line: <error string> : <last error>" and exits 1.
[[noreturn]] void PerfWeftFail(const char* file, int line, weftResult_t result, weftComm_t comm);

// Ends the process with `status`, through the hook set by the launcher (for
// example MPI_Abort, so that mpirun stops the other ranks too).
[[noreturn]] void PerfExit(int status);

// Called by PerfExit instead of exit() when set. Must not return.
void PerfSetExitHook(void (*hook)(int status));

#define PERF_WEFT_CHECK(comm, call)                           \
  do {                                                        \
    weftResult_t perf_result_ = (call);                       \
    if (perf_result_ != weftSuccess) {                        \
      PerfWeftFail(__FILE__, __LINE__, perf_result_, (comm)); \
    }                                                         \
  } while (0)

#endif  // WEFT_PERF_PERF_ERROR_H
