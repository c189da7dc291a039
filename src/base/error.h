// Errors: every internal function that can fail returns weftResult_t and, when
// it fails, records a sentence with setError(). The sentence is thread-local so
// that weftGetLastError() answers for the calling thread, as errno does.
#pragma once

#include <string>

#include "weft/weft.h"

namespace weft {

// Records `fmt` (printf-style) as this thread's last error and returns `code`.
weftResult_t setError(weftResult_t code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
// Replaces the last error with `msg` verbatim (used to carry an error across threads).
weftResult_t setErrorString(weftResult_t code, const std::string& msg);
void clearError();
const std::string& lastError();

}  // namespace weft

// Propagate a failure: evaluates `expr` once and returns its result if not success.
#define WEFT_CHECK(expr)                                        \
  do {                                                          \
    weftResult_t weft_check_res_ = (expr);                      \
    if (weft_check_res_ != weftSuccess) return weft_check_res_; \
  } while (0)
