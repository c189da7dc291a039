// mp_fault: the fault suite. Each trial forks N rank processes that run a
// seeded random sequence of calls (kind, size, root) on one communicator:
// blocking collectives, two non-blocking ones in flight at once, send/recv
// pairs, and ring exchanges in a group (blocking and weftGroupEndAsync). It
// breaks one rank (the victim) in one of three ways:
//   kill-self  the victim SIGKILLs itself just before its k-th call;
//   kill-any   this driver SIGKILLs the victim after a random delay, at
//              whatever point of whatever collective it is in;
//   stop-abort the victim SIGSTOPs (alive, silent); every survivor's watchdog
//              thread calls weftCommAbort while its main thread is blocked in
//              a collective on the same communicator.
// A survivor passes when its pending call fails with weftRemoteError or
// weftTimeout (kill) / weftInvalidUsage "aborted" (stop), within a bound;
// then, for kills, weftCommShrink without the victim gives a communicator on
// which an allreduce and an allgather are right, and weftCommAbort of the
// old one returns within 1 s (abort: the blocked call returns within 1 s).
// After every trial no rank may be left running and /dev/shm must hold no
// new file. Prints the seed, every failure, and a summary; exit 0 = pass.
//   mp_fault --transport tcp|shm --trials T --ranks N --seed S
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include "mp_fault_rank.h"

namespace {

// Names in /dev/shm, less those of programs that ctest may run beside this
// one: Python multiprocessing's semaphores (sem.mp-*, the torch tests) and
// Open MPI's shared-memory segments (vader_segment.*, the mpirun tests). One
// of each, made during a trial, once failed it as "stale".
std::set<std::string> devShm() {
  static const char* const kForeign[] = {"sem.mp-", "vader_segment."};
  std::set<std::string> names;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      bool foreign = e->d_name[0] == '.';
      for (const char* prefix : kForeign)
        foreign = foreign || std::strncmp(e->d_name, prefix, std::strlen(prefix)) == 0;
      if (!foreign) names.insert(e->d_name);
    }
    closedir(d);
  }
  return names;
}

const char* modeName(int m) {
  return m == fault::kKillSelf ? "kill-self" : m == fault::kKillAny ? "kill-any" : "stop-abort";
}

}  // namespace

int main(int argc, char** argv) {
  std::string transport = "tcp";
  int trials = 25, maxRanks = 4;
  unsigned long long seed = 12345;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--transport"))
      transport = argv[i + 1];
    else if (!std::strcmp(argv[i], "--trials"))
      trials = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--ranks"))
      maxRanks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (maxRanks < 3 || maxRanks > fault::kMaxRanks || trials < 1) {
    std::fprintf(stderr, "usage: mp_fault --transport tcp|shm --trials T --ranks 3..8 --seed S\n");
    return 2;
  }
  const double timeoutSec = 10;
  setenv("WEFT_TIMEOUT", "10", 1);
  if (transport == "tcp") setenv("WEFT_SHM_DISABLE", "1", 1);
  setenv("WEFT_DEBUG", "NONE", 0);  // the survivors' WARN lines would drown the summary
  std::printf("mp_fault: transport %s, %d trials, seed %llu (rerun: --seed %llu)\n",
              transport.c_str(), trials, seed, seed);
  std::fflush(stdout);

  auto* shared = static_cast<fault::Shared*>(mmap(
      nullptr, sizeof(fault::Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) return 2;
  std::mt19937_64 rng(seed);
  int failures = 0, survivorsTotal = 0, survivorsOk = 0, namedVictim = 0, killSurvivors = 0;
  double worstErr = 0, worstAbort = 0;
  for (int t = 0; t < trials; ++t) {
    new (shared) fault::Shared();
    fault::Plan& plan = shared->plan;
    plan.nranks = 3 + static_cast<int>(rng() % (maxRanks - 2));
    plan.victim = static_cast<int>(rng() % plan.nranks);
    const unsigned pick = static_cast<unsigned>(rng() % 10);
    plan.mode = pick < 4 ? fault::kKillSelf : pick < 8 ? fault::kKillAny : fault::kStopAbort;
    plan.killAt = static_cast<int>(rng() % 12);
    plan.callSeed = rng();
    plan.timeoutSec = timeoutSec;
    const int delayUs = static_cast<int>(rng() % 150000);
    const std::set<std::string> shmBefore = devShm();

    pid_t pids[fault::kMaxRanks] = {};
    for (int r = 0; r < plan.nranks; ++r) {
      pids[r] = fork();
      if (pids[r] == 0) _exit(fault::runRank(shared, r));
    }
    if (plan.mode == fault::kKillAny) {
      // Wait until every rank is in its loop, then kill the victim later on.
      for (int i = 0; i < 20000 && shared->started.load() < plan.nranks; ++i) usleep(1000);
      usleep(delayUs);
      shared->deathTime.store(fault::now());
      kill(pids[plan.victim], SIGKILL);
    }
    // Every survivor must finish well inside WEFT_TIMEOUT + shrink; then clean up.
    const double deadline = fault::now() + timeoutSec * 2 + 20;
    int left = plan.nranks;
    bool hung = false;
    while (left > 0) {
      for (int r = 0; r < plan.nranks; ++r) {
        if (pids[r] == 0) continue;
        int status = 0;
        if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
          pids[r] = 0;
          --left;
        }
      }
      if (left == 0) break;
      bool survivorsDone = true;
      for (int r = 0; r < plan.nranks; ++r)
        if (r != plan.victim && pids[r] != 0) survivorsDone = false;
      if (survivorsDone && pids[plan.victim] != 0) kill(pids[plan.victim], SIGKILL);  // stopped
      if (fault::now() > deadline && !hung) {
        hung = true;
        for (int r = 0; r < plan.nranks; ++r)
          if (pids[r] != 0) kill(pids[r], SIGKILL);
      }
      usleep(2000);
    }
    std::string line;
    bool trialOk = !hung;
    for (int r = 0; r < plan.nranks; ++r) {
      if (r == plan.victim) continue;
      const fault::Result& res = shared->result[r];
      ++survivorsTotal;
      if (res.ok) ++survivorsOk;
      if (res.namedVictim) ++namedVictim;
      if (plan.mode != fault::kStopAbort) ++killSurvivors;
      if (!res.ok) {
        trialOk = false;
        line += "\n    rank " + std::to_string(r) + ": " + res.why;
      }
      if (res.timeToError > worstErr) worstErr = res.timeToError;
      if (res.timeToAbort > worstAbort) worstAbort = res.timeToAbort;
    }
    for (const std::string& name : devShm())
      if (!shmBefore.count(name)) {
        trialOk = false;
        line += "\n    stale /dev/shm/" + name;
      }
    if (hung) line += "\n    survivors hung: killed after the deadline";
    std::printf(
        "trial %2d: %d ranks, victim %d, %-10s at call %2d%s -> %s%s\n", t, plan.nranks,
        plan.victim, modeName(plan.mode), plan.killAt,
        plan.mode == fault::kKillAny ? (" +" + std::to_string(delayUs / 1000) + "ms").c_str() : "",
        trialOk ? "ok" : "FAIL", line.c_str());
    std::fflush(stdout);
    failures += trialOk ? 0 : 1;
  }
  std::printf(
      "FAULT-SUMMARY transport %s seed %llu: %d trials, %d failed; %d of %d survivors "
      "errored as expected in time (%d of the %d kill survivors' first error named the "
      "victim); longest time-to-error %.3f s, "
      "longest time-to-abort %.3f s\n",
      transport.c_str(), seed, trials, failures, survivorsOk, survivorsTotal, namedVictim,
      killSurvivors, worstErr, worstAbort);
  return failures == 0 ? 0 : 1;
}
