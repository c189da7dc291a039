// Thread-local last-error storage and the result-code strings of the C ABI.
#include "base/error.h"

#include <cstdarg>
#include <cstdio>

namespace weft {
namespace {
thread_local std::string tlsLastError;
}

weftResult_t setError(weftResult_t code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  tlsLastError = buf;
  return code;
}

weftResult_t setErrorString(weftResult_t code, const std::string& msg) {
  tlsLastError = msg;
  return code;
}

void clearError() { tlsLastError.clear(); }
const std::string& lastError() { return tlsLastError; }

}  // namespace weft

extern "C" const char* weftGetErrorString(weftResult_t result) {
  switch (result) {
    case weftSuccess:
      return "no error";
    case weftUnhandledCudaError:
      return "unhandled cuda error";
    case weftSystemError:
      return "unhandled system error (network, memory, ...)";
    case weftInternalError:
      return "internal error - please report this issue";
    case weftInvalidArgument:
      return "invalid argument";
    case weftInvalidUsage:
      return "invalid usage";
    case weftRemoteError:
      return "remote process exited or there was a network error";
    case weftInProgress:
      return "operation in progress";
    case weftTimeout:
      return "operation timed out";
    default:
      return "unknown result code";
  }
}

extern "C" const char* weftGetLastError(weftComm_t) { return weft::lastError().c_str(); }

extern "C" weftResult_t weftGetVersion(int* version) {
  if (version == nullptr)
    return weft::setError(weftInvalidArgument, "weftGetVersion: version is NULL");
  *version = WEFT_VERSION_CODE;
  return weftSuccess;
}
