// The local ranks of weft-run: starting N copies of a command with their rank
// environment, and supervising them (failures, timeout, forwarded signals).
#ifndef WEFT_TOOLS_WEFT_RUN_RANKS_H
#define WEFT_TOOLS_WEFT_RUN_RANKS_H

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

struct RankLaunch {
  int nranks = 1;
  double timeout_s = 0;   // 0: no timeout
  std::string unique_id;  // text form of the weft unique id
  std::string path;       // resolved executable
  std::vector<std::string> argv;
  // --standby K: K more processes with WEFT_STANDBY=1 and no rank, and every
  // process told the pool's address; a rank's death then stops no one.
  int standby = 0;
  std::string standby_addr;
  std::function<void()> ranks_ended;  // once every rank (not standby) ended
  // Told of every rank and standby started and every process ended.
  std::function<void(int rank, pid_t pid)> rank_started;
  std::function<void(pid_t pid)> standby_started;
  std::function<void(pid_t pid)> process_ended;
};

// Signals weft-run handles itself: they must be blocked in every thread of
// weft-run (call before any thread starts) and are unblocked in the ranks.
void BlockSupervisorSignals(sigset_t* previous_mask);
// Finds `command` on PATH as execvp would; empty when not found.
std::string ResolveCommand(const std::string& command);
// Starts the ranks (and standbys) and waits for all of them. Returns
// weft-run's exit status: 0 when every rank exited 0, 124 on timeout, else
// the first failure's status (128 + signal for a rank killed by a signal;
// with standbys, deaths by a signal are reported but not failures: the job
// replaces those ranks).
int RunRanks(const RankLaunch& launch, const sigset_t& rank_mask);

#endif  // WEFT_TOOLS_WEFT_RUN_RANKS_H
