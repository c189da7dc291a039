// Log sink: level and subsystem filters are read once from the config table.
#include "base/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "base/config.h"

namespace weft {
namespace {

struct LogState {
  LogLevel level = LogLevel::kWarn;
  unsigned subsys = ~0u;
  FILE* out = stderr;
  char host[64] = {0};
};

const char* levelName(LogLevel l) {
  switch (l) {
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kTrace:
      return "TRACE";
    default:
      return "";
  }
}

const char* subsysName(unsigned s) {
  switch (s) {
    case kLogINIT:
      return "INIT";
    case kLogBOOTSTRAP:
      return "BOOTSTRAP";
    case kLogNET:
      return "NET";
    case kLogCOLL:
      return "COLL";
    case kLogTUNING:
      return "TUNING";
    default:
      return "?";
  }
}

unsigned parseSubsys(const std::string& text) {
  if (text.empty() || text == "ALL") return ~0u;
  unsigned mask = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string tok =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    for (unsigned bit = 1; bit <= kLogTUNING; bit <<= 1)
      if (tok == subsysName(bit) || tok == "ALL") mask |= (tok == "ALL") ? ~0u : bit;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return mask;
}

// Read lazily (not at load time) so tests may set the environment first.
LogState& state() {
  static LogState s = [] {
    LogState st;
    // Any case, as configChoice reads it (no error may be set from here: the
    // log starts inside other calls). A word outside the row's leaves WARN;
    // a communicator's init refuses it.
    const std::string lvl = configString("WEFT_DEBUG");
    if (strcasecmp(lvl.c_str(), "NONE") == 0)
      st.level = LogLevel::kNone;
    else if (strcasecmp(lvl.c_str(), "INFO") == 0)
      st.level = LogLevel::kInfo;
    else if (strcasecmp(lvl.c_str(), "TRACE") == 0)
      st.level = LogLevel::kTrace;
    st.subsys = parseSubsys(configString("WEFT_DEBUG_SUBSYS"));
    gethostname(st.host, sizeof(st.host) - 1);
    std::string file = configString("WEFT_DEBUG_FILE");
    if (!file.empty()) {
      std::string path;
      for (size_t i = 0; i < file.size(); ++i) {
        if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'h')
          path += st.host, ++i;
        else if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'p')
          path += std::to_string(getpid()), ++i;
        else
          path += file[i];
      }
      if (FILE* f = fopen(path.c_str(), "a")) st.out = f;
    }
    return st;
  }();
  return s;
}

thread_local int tlsRank = -1;

}  // namespace

void logSetRank(int rank) { tlsRank = rank; }

bool logEnabled(LogLevel level, unsigned subsys) {
  const LogState& s = state();
  return level <= s.level && (s.subsys & subsys) != 0;
}

namespace {

void printLine(LogLevel level, unsigned subsys, const char* msg) {
  LogState& s = state();
  long tid = syscall(SYS_gettid);
  // One fprintf per line so that lines of concurrent threads do not interleave.
  fprintf(s.out, "%s:%d:%ld [%d] WEFT %s %s %s\n", s.host, getpid(), tid, tlsRank, levelName(level),
          subsysName(subsys), msg);
  fflush(s.out);
}

std::mutex budgetMu;
LogBudget* heldList = nullptr;  // places with lines held back, for the count at exit

double nowSec() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Counts of lines still held back when the process ends.
struct HeldAtExit {
  ~HeldAtExit() {
    std::lock_guard<std::mutex> lock(budgetMu);
    for (LogBudget* b = heldList; b != nullptr; b = b->nextHeld)
      if (b->held > 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%llu more warning(s) like an earlier one were not shown",
                 static_cast<unsigned long long>(b->held));
        printLine(LogLevel::kWarn, b->subsys, msg);
        b->held = 0;
      }
  }
} heldAtExit;

}  // namespace

void logPrint(LogLevel level, unsigned subsys, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  printLine(level, subsys, msg);
}

void logWarnLimited(LogBudget* budget, unsigned subsys, const char* fmt, ...) {
  uint64_t held = 0;
  {
    std::lock_guard<std::mutex> lock(budgetMu);
    const double now = nowSec();
    if (budget->shown == 0 || now - budget->windowStart >= kWarnWindowSec) {
      budget->windowStart = now;
      budget->shown = 0;
    }
    if (budget->shown >= kWarnBurst) {
      ++budget->held;
      budget->subsys = subsys;
      if (!budget->listed) {
        budget->listed = true;
        budget->nextHeld = heldList;
        heldList = budget;
      }
      return;
    }
    ++budget->shown;
    held = budget->held;
    budget->held = 0;
  }
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (held > 0 && n >= 0 && static_cast<size_t>(n) < sizeof(msg))
    snprintf(msg + n, sizeof(msg) - n, " (and %llu more like it since the last one shown)",
             static_cast<unsigned long long>(held));
  printLine(LogLevel::kWarn, subsys, msg);
}

}  // namespace weft
