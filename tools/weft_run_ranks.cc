// Starting and supervising weft-run's local ranks (see weft_run_ranks.h).
// weft-run blocks SIGCHLD/SIGINT/SIGTERM/SIGHUP and takes them one at a time
// with sigtimedwait, so there are no signal handlers and no races with reaping.
#include "weft_run_ranks.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// After the first failure, the other ranks get this long to notice and exit
// on their own (printing their own errors) before SIGTERM.
constexpr std::chrono::seconds kFailureGrace(3);
// After SIGTERM, this long before SIGKILL.
constexpr std::chrono::seconds kKillGrace(5);

struct Rank {
  pid_t pid = -1;
  bool running = false;
};

const char* SignalName(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    default:
      return nullptr;
  }
}

void SupervisorSignals(sigset_t* set) {
  sigemptyset(set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(set, sig);
}

// The environment of one process: ours, with the WEFT_* launch variables
// replaced. Processes from nranks on are standbys: no rank, WEFT_STANDBY=1.
std::vector<std::string> RankEnvironment(const RankLaunch& launch, int index) {
  const bool standby = index >= launch.nranks;
  const std::string i = std::to_string(index);
  const std::string n = std::to_string(launch.nranks);
  std::vector<std::string> ours = {
      "WEFT_UNIQUE_ID=" + launch.unique_id,
      "WEFT_WORLD_SIZE=" + n,
      "WEFT_LOCAL_RANK=" + i,
      "WEFT_LOCAL_SIZE=" + std::to_string(launch.nranks + launch.standby),
  };
  if (!standby) ours.push_back("WEFT_RANK=" + i);
  if (standby) ours.push_back("WEFT_STANDBY=1");
  if (launch.standby > 0) ours.push_back("WEFT_STANDBY_ADDR=" + launch.standby_addr);
  const char* const dropped[] = {"WEFT_RANK=", "WEFT_STANDBY=", "WEFT_STANDBY_ADDR="};
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    bool replaced = false;
    for (const std::string& var : ours) {
      const size_t name_length = var.find('=') + 1;
      if (std::strncmp(*entry, var.c_str(), name_length) == 0) replaced = true;
    }
    for (const char* name : dropped)
      if (std::strncmp(*entry, name, std::strlen(name)) == 0) replaced = true;
    if (!replaced) env.push_back(*entry);
  }
  env.insert(env.end(), ours.begin(), ours.end());
  return env;
}

std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(&s[0]);
  pointers.push_back(nullptr);
  return pointers;
}

// Forks one rank. The child does only async-signal-safe work before exec.
pid_t StartRank(const RankLaunch& launch, int rank, const sigset_t& rank_mask) {
  std::vector<std::string> env = RankEnvironment(launch, rank);
  std::vector<std::string> args = launch.argv;
  std::vector<char*> env_pointers = PointersTo(env);
  std::vector<char*> arg_pointers = PointersTo(args);
  const pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &rank_mask, nullptr);
    execve(launch.path.c_str(), arg_pointers.data(), env_pointers.data());
    const char* reason = std::strerror(errno);
    const char* parts[] = {"weft-run: cannot execute ", launch.path.c_str(), ": ", reason, "\n"};
    for (const char* part : parts) {
      if (write(STDERR_FILENO, part, std::strlen(part)) < 0) break;
    }
    _exit(127);
  }
  return pid;
}

// Says how a rank ended; returns the exit status weft-run would use for it.
int DescribeEnd(const std::string& who, int wait_status, bool print) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    if (print) {
      const char* name = SignalName(sig);
      const std::string label = name != nullptr ? name : std::to_string(sig);
      std::fprintf(stderr, "weft-run: %s killed by signal %s (%s)\n", who.c_str(), label.c_str(),
                   strsignal(sig));
    }
    return 128 + sig;
  }
  const int code = WEXITSTATUS(wait_status);
  if (code != 0 && print)
    std::fprintf(stderr, "weft-run: %s exited with status %d\n", who.c_str(), code);
  return code;
}

class Supervisor {
 public:
  Supervisor(const RankLaunch& launch, std::vector<Rank>* ranks) : launch_(launch), ranks_(*ranks) {
    if (launch.timeout_s > 0) {
      timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(launch.timeout_s));
      has_timeout_ = true;
    }
  }

  int Run() {
    sigset_t signals;
    SupervisorSignals(&signals);
    while (Running() > 0) {
      HandleDeadlines();
      siginfo_t info;
      int sig = 0;
      if (NextDeadline() == Clock::time_point::max()) {
        sig = sigwaitinfo(&signals, &info);
      } else {
        const auto wait = std::max(NextDeadline() - Clock::now(), Clock::duration::zero());
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
        timespec ts = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
        sig = sigtimedwait(&signals, &info, &ts);
      }
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) Forward(sig);
      Reap();
      NoticeRanksEnded();
    }
    if (timed_out_) return 124;
    if (interrupted_by_ != 0) return 128 + interrupted_by_;
    return first_failure_;
  }

 private:
  int Running() const {
    int running = 0;
    for (const Rank& rank : ranks_) running += rank.running ? 1 : 0;
    return running;
  }

  Clock::time_point NextDeadline() const {
    Clock::time_point next = Clock::time_point::max();
    if (has_timeout_ && !timed_out_) next = std::min(next, timeout_at_);
    if (term_pending_) next = std::min(next, term_at_);
    if (kill_pending_) next = std::min(next, kill_at_);
    return next;
  }

  void SignalAll(int sig) {
    for (const Rank& rank : ranks_) {
      if (rank.running) kill(rank.pid, sig);
    }
  }

  void StartKilling(int sig) {
    killing_ = true;
    term_pending_ = false;
    SignalAll(sig);
    if (!kill_pending_) {
      kill_pending_ = true;
      kill_at_ = Clock::now() + kKillGrace;
    }
  }

  void HandleDeadlines() {
    const Clock::time_point now = Clock::now();
    if (has_timeout_ && !timed_out_ && now >= timeout_at_) {
      timed_out_ = true;
      std::fprintf(stderr, "weft-run: timeout after %g s, stopping %d running rank(s)\n",
                   launch_.timeout_s, Running());
      StartKilling(SIGTERM);
    }
    if (term_pending_ && now >= term_at_) {
      std::fprintf(stderr, "weft-run: stopping %d remaining rank(s)\n", Running());
      StartKilling(SIGTERM);
    }
    if (kill_pending_ && now >= kill_at_) {
      kill_pending_ = false;
      SignalAll(SIGKILL);
    }
  }

  // Passes SIGINT/SIGTERM/SIGHUP on to the ranks. Unless a rank had already
  // failed, weft-run then exits as if killed by that signal (128 + sig).
  void Forward(int sig) {
    if (interrupted_by_ == 0 && first_failure_ == 0 && !killing_) interrupted_by_ = sig;
    StartKilling(sig);
  }

  void Reap() {
    int status = 0;
    pid_t pid = 0;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (launch_.process_ended) launch_.process_ended(pid);
      for (size_t r = 0; r < ranks_.size(); ++r) {
        if (ranks_[r].pid != pid || !ranks_[r].running) continue;
        ranks_[r].running = false;
        // Once weft-run is stopping the ranks itself, their deaths are expected.
        const int index = static_cast<int>(r);
        const std::string who = index < launch_.nranks
                                    ? "rank " + std::to_string(index)
                                    : "standby " + std::to_string(index - launch_.nranks);
        const int code = DescribeEnd(who, status, !killing_);
        // With standbys a death is what they are for: reported, not fatal.
        const bool replaceable = launch_.standby > 0 && WIFSIGNALED(status);
        if (code != 0 && first_failure_ == 0 && !replaceable) {
          first_failure_ = code;
          if (!killing_) {
            term_pending_ = true;
            term_at_ = Clock::now() + kFailureGrace;
          }
        }
      }
    }
  }

  // Once every rank (not standby) ended, the launcher stops the pool, and
  // the standbys still waiting return.
  void NoticeRanksEnded() {
    if (ranks_ended_told_ || !launch_.ranks_ended) return;
    for (int r = 0; r < launch_.nranks; ++r)
      if (ranks_[static_cast<size_t>(r)].running) return;
    ranks_ended_told_ = true;
    launch_.ranks_ended();
  }

  const RankLaunch& launch_;
  std::vector<Rank>& ranks_;
  bool ranks_ended_told_ = false;
  bool has_timeout_ = false;
  bool timed_out_ = false;
  Clock::time_point timeout_at_;
  bool term_pending_ = false;
  Clock::time_point term_at_;
  bool kill_pending_ = false;
  Clock::time_point kill_at_;
  bool killing_ = false;
  int first_failure_ = 0;
  int interrupted_by_ = 0;
};

}  // namespace

void BlockSupervisorSignals(sigset_t* previous_mask) {
  sigset_t signals;
  SupervisorSignals(&signals);
  sigprocmask(SIG_BLOCK, &signals, previous_mask);
}

std::string ResolveCommand(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + command;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return std::string();
}

int RunRanks(const RankLaunch& launch, const sigset_t& rank_mask) {
  const int processes = launch.nranks + launch.standby;
  std::vector<Rank> ranks(static_cast<size_t>(processes));
  Supervisor supervisor(launch, &ranks);
  for (int r = 0; r < processes; ++r) {
    const pid_t pid = StartRank(launch, r, rank_mask);
    if (pid < 0) {
      std::fprintf(stderr, "weft-run: cannot start rank %d: %s\n", r, std::strerror(errno));
      for (const Rank& started : ranks) {
        if (started.running) kill(started.pid, SIGKILL);
      }
      while (wait(nullptr) > 0) {
      }
      return 1;
    }
    ranks[static_cast<size_t>(r)].pid = pid;
    ranks[static_cast<size_t>(r)].running = true;
    if (r < launch.nranks && launch.rank_started) launch.rank_started(r, pid);
    if (r >= launch.nranks && launch.standby_started) launch.standby_started(pid);
  }
  return supervisor.Run();
}
