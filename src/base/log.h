// Logging controlled by WEFT_DEBUG (level) and WEFT_DEBUG_SUBSYS (subsystems).
// One line per event: "host:pid:tid [rank] WEFT LEVEL SUBSYS message".
#pragma once

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

}  // namespace weft

#define WEFT_LOG_AT(level, subsys, ...)                           \
  do {                                                            \
    if (::weft::logEnabled(level, ::weft::kLog##subsys))          \
      ::weft::logPrint(level, ::weft::kLog##subsys, __VA_ARGS__); \
  } while (0)
#define WEFT_WARN(subsys, ...) WEFT_LOG_AT(::weft::LogLevel::kWarn, subsys, __VA_ARGS__)
#define WEFT_INFO(subsys, ...) WEFT_LOG_AT(::weft::LogLevel::kInfo, subsys, __VA_ARGS__)
#define WEFT_TRACE(subsys, ...) WEFT_LOG_AT(::weft::LogLevel::kTrace, subsys, __VA_ARGS__)
