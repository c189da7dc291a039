// The local ranks of weft-run: starting N copies of a command with their rank
// environment, and supervising them (failures, timeout, forwarded signals).
#ifndef WEFT_TOOLS_WEFT_RUN_RANKS_H
#define WEFT_TOOLS_WEFT_RUN_RANKS_H

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

struct RankLaunch {
  int nranks = 1;
  double timeout_s = 0;   // 0: no timeout
  std::string unique_id;  // text form of the weft unique id
  std::string path;       // resolved executable
  std::vector<std::string> argv;
};

// Signals weft-run handles itself: they must be blocked in every thread of
// weft-run (call before any thread starts) and are unblocked in the ranks.
void BlockSupervisorSignals(sigset_t* previous_mask);
// Finds `command` on PATH as execvp would; empty when not found.
std::string ResolveCommand(const std::string& command);
// Starts the ranks and waits for all of them. Returns weft-run's exit status:
// 0 when every rank exited 0, 124 on timeout, else the first failure's status
// (128 + signal for a rank killed by a signal).
int RunRanks(const RankLaunch& launch, const sigset_t& rank_mask);

#endif  // WEFT_TOOLS_WEFT_RUN_RANKS_H
