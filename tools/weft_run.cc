// weft-run: starts N local ranks of a command for a weft job, without MPI.
//   weft-run -n N [--standby K] [--timeout SEC] [--] cmd args...
// Creates a unique id (this process serves the rendezvous in the background),
// passes it to the ranks as WEFT_UNIQUE_ID with WEFT_RANK, WEFT_WORLD_SIZE,
// WEFT_LOCAL_RANK and WEFT_LOCAL_SIZE, and supervises them (weft_run_ranks.h).
// With --standby it also serves a standby pool (weftStandbyPoolStart) for the
// job's life and starts K standby processes (WEFT_STANDBY=1).
#include <weft/weft.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "weft_run_ranks.h"

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: weft-run -n N [--standby K] [--timeout SEC] [--] cmd [args...]\n"
               "  -n N            number of local ranks to start\n"
               "  --standby K     also K standby processes (WEFT_STANDBY=1), which take the\n"
               "                  place of ranks that die (weftStandbyWait, weftCommReplace)\n"
               "  --timeout SEC   stop every rank after SEC seconds (exit status 124)\n"
               "  -h, --help      this text\n"
               "Exit status: 0 when every rank exits 0, else the first failing rank's status\n"
               "(128 + signal number when it was killed by a signal; with --standby, a\n"
               "death by a signal is reported, not a failure).\n");
}

bool ParsePositiveInt(const char* text, int* value) {
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || parsed < 1 || parsed > 65536) return false;
  *value = static_cast<int>(parsed);
  return true;
}

bool ParseSeconds(const char* text, double* value) {
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(parsed > 0) || parsed > 1e9) return false;
  *value = parsed;
  return true;
}

// Parses options up to the command. Returns -1 to go on, else an exit status.
int ParseArgs(int argc, char** argv, RankLaunch* launch) {
  bool have_n = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_next = i + 1 < argc;
    if (arg == "--") {
      ++i;
      break;
    } else if (arg == "-h" || arg == "--help") {
      PrintUsage(stdout);
      return 0;
    } else if (arg == "-n" || arg == "-np") {
      if (!has_next || !ParsePositiveInt(argv[++i], &launch->nranks)) {
        std::fprintf(stderr, "weft-run: -n needs a number of ranks from 1 to 65536\n");
        return 2;
      }
      have_n = true;
    } else if (arg.rfind("-n", 0) == 0 && arg.size() > 2 && arg[2] != 'p') {
      if (!ParsePositiveInt(arg.c_str() + 2, &launch->nranks)) {
        std::fprintf(stderr, "weft-run: bad rank count '%s'\n", arg.c_str() + 2);
        return 2;
      }
      have_n = true;
    } else if (arg == "--timeout" || arg.rfind("--timeout=", 0) == 0) {
      const bool inline_value = arg.size() > 9;
      const char* value = inline_value ? arg.c_str() + 10 : (has_next ? argv[++i] : "");
      if (!ParseSeconds(value, &launch->timeout_s)) {
        std::fprintf(stderr, "weft-run: --timeout needs a positive number of seconds\n");
        return 2;
      }
    } else if (arg == "--standby") {
      if (!has_next || (std::strcmp(argv[i + 1], "0") != 0 &&
                        !ParsePositiveInt(argv[i + 1], &launch->standby))) {
        std::fprintf(stderr, "weft-run: --standby needs a number of standby processes\n");
        return 2;
      }
      ++i;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "weft-run: unknown option %s\n", arg.c_str());
      PrintUsage(stderr);
      return 2;
    } else {
      break;
    }
  }
  if (!have_n || i >= argc) {
    std::fprintf(stderr, "weft-run: %s\n", have_n ? "no command given" : "-n N is required");
    PrintUsage(stderr);
    return 2;
  }
  launch->argv.assign(argv + i, argv + argc);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  RankLaunch launch;
  const int parse_status = ParseArgs(argc, argv, &launch);
  if (parse_status >= 0) return parse_status;

  launch.path = ResolveCommand(launch.argv[0]);
  if (launch.path.empty()) {
    std::fprintf(stderr, "weft-run: %s: command not found\n", launch.argv[0].c_str());
    return 127;
  }

  // Before weft starts its rendezvous thread, so that the thread inherits the
  // blocked signals and they reach the supervisor's sigtimedwait.
  sigset_t rank_mask;
  BlockSupervisorSignals(&rank_mask);

  weftUniqueId id;
  if (weftGetUniqueId(&id) != weftSuccess) {
    std::fprintf(stderr, "weft-run: cannot create a unique id: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  char text[WEFT_UNIQUE_ID_STRLEN];
  if (weftUniqueIdToString(&id, text, sizeof(text)) != weftSuccess) {
    std::fprintf(stderr, "weft-run: cannot format the unique id: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  launch.unique_id = text;
  weftStandbyPool_t pool = nullptr;
  if (launch.standby > 0) {
    char addr[256];
    if (weftStandbyPoolStart(&pool, addr, sizeof(addr)) != weftSuccess) {
      std::fprintf(stderr, "weft-run: cannot serve the standby pool: %s\n",
                   weftGetLastError(nullptr));
      return 1;
    }
    launch.standby_addr = addr;
    launch.ranks_ended = [&pool] {
      weftStandbyPoolStop(pool);
      pool = nullptr;
    };
    // So that survivors can ask the pool which ranks died (weftCommReplace).
    launch.rank_started = [&pool, &launch](int rank, pid_t pid) {
      weftStandbyPoolRankStarted(pool, rank, launch.nranks, pid);
    };
    launch.standby_started = [&pool](pid_t pid) { weftStandbyPoolStandbyStarted(pool, pid); };
    launch.process_ended = [&pool](pid_t pid) {
      if (pool != nullptr) weftStandbyPoolProcessEnded(pool, pid);
    };
  }
  const int status = RunRanks(launch, rank_mask);
  weftStandbyPoolStop(pool);
  return status;
}
