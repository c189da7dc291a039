// What the fault suite's driver (mp_fault.cc) and its forked ranks
// (mp_fault_rank.cc) share: the trial plan, written by the driver before the
// fork, and one result per rank, in an anonymous shared mapping.
#pragma once

#include <weft/weft.h>

#include <atomic>
#include <cstdint>

namespace fault {

constexpr int kMaxRanks = 8;
enum Mode { kKillSelf = 0, kKillAny = 1, kStopAbort = 2 };

struct Plan {
  int nranks = 3;
  int victim = 1;
  int mode = kKillSelf;
  int killAt = 0;         // kill-self / stop-abort: the victim's call index
  uint64_t callSeed = 0;  // every rank draws the same call sequence from it
  double timeoutSec = 10;
};

struct Result {
  bool ok = false;
  bool namedVictim = false;  // the first error sentence names the victim's rank
  double timeToError = 0;    // victim's death -> this survivor's failed call returned
  double timeToAbort = 0;    // weftCommAbort call -> returned (and blocked call returned)
  char why[400] = {};
};

struct Shared {
  Plan plan;
  std::atomic<int> idReady{0};
  weftUniqueId id{};
  std::atomic<int> started{0};        // ranks that entered their call loop
  std::atomic<double> deathTime{0};   // CLOCK_MONOTONIC seconds when the victim died/stopped
  std::atomic<double> firstAbort{0};  // stop-abort: when the first survivor called weftCommAbort
  Result result[kMaxRanks];
};

// Seconds on CLOCK_MONOTONIC: comparable across processes.
double now();
// Runs rank `rank` of the trial; returns the process's exit code.
int runRank(Shared* shared, int rank);

}  // namespace fault
