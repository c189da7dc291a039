// Logging controlled by WEFT_DEBUG (level) and WEFT_DEBUG_SUBSYS (subsystems).
// One line per event: "host:pid:tid [rank] WEFT LEVEL SUBSYS message".
#pragma once

#include <cstdint>

namespace weft {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };
enum LogSubsys : unsigned {
  kLogINIT = 1u << 0,
  kLogBOOTSTRAP = 1u << 1,
  kLogNET = 1u << 2,
  kLogCOLL = 1u << 3,
  kLogTUNING = 1u << 4,
};

bool logEnabled(LogLevel level, unsigned subsys);
void logPrint(LogLevel level, unsigned subsys, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// The rank shown in this thread's log lines (-1 = unknown).
void logSetRank(int rank);

// The warnings of one place in the code (one WEFT_WARN): a stream of bad
// connections or a failing peer must not flood the log, so each place shows
// at most kWarnBurst lines per kWarnWindowSec; the lines it holds back are
// counted, and the count is shown with its next line, or at exit.
// Zero-initialised and guarded by the log's lock.
struct LogBudget {
  double windowStart;
  uint32_t shown;
  uint64_t held;
  unsigned subsys;
  bool listed;  // in the list of places that held lines back
  LogBudget* nextHeld;
};
constexpr uint32_t kWarnBurst = 5;
constexpr double kWarnWindowSec = 30.0;
void logWarnLimited(LogBudget* budget, unsigned subsys, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace weft

#define WEFT_LOG_AT(level, subsys, ...)                           \
  do {                                                            \
    if (::weft::logEnabled(level, ::weft::kLog##subsys))          \
      ::weft::logPrint(level, ::weft::kLog##subsys, __VA_ARGS__); \
  } while (0)
#define WEFT_WARN(subsys, ...)                                                     \
  do {                                                                             \
    static ::weft::LogBudget weftWarnBudget_;                                      \
    if (::weft::logEnabled(::weft::LogLevel::kWarn, ::weft::kLog##subsys))         \
      ::weft::logWarnLimited(&weftWarnBudget_, ::weft::kLog##subsys, __VA_ARGS__); \
  } while (0)
#define WEFT_INFO(subsys, ...) WEFT_LOG_AT(::weft::LogLevel::kInfo, subsys, __VA_ARGS__)
#define WEFT_TRACE(subsys, ...) WEFT_LOG_AT(::weft::LogLevel::kTrace, subsys, __VA_ARGS__)
