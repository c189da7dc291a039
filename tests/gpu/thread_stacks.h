// For the GPU checks: on SIGUSR1 every thread of the process writes its call
// stack to stderr, so that a check stopped by its time cap says where each
// thread waited (in which CUDA call, in which weft wait). perf/gpu_check.sh
// sends SIGUSR1 at a step's cap and SIGKILL 5 s later, then names the frames
// of weft and the test with addr2line. Header-only, no CUDA: the unit test
// tests/unit/thread_stacks_test.cc runs it on any machine.
//
// How: installStackDumper(), called before the process starts any thread,
// blocks SIGUSR1 (threads started later inherit the mask, so only the
// watcher takes it, with sigwait, outside any signal handler) and starts the
// watcher. The watcher sends SIGUSR2 to each thread in turn (tgkill), whose
// handler writes that thread's frames (backtrace_symbols_fd writes straight
// to the descriptor, allocating nothing, so it is safe in a handler). A
// thread that blocks SIGUSR2 (a CUDA driver thread may) is listed without a
// stack.
#pragma once

#include <dirent.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace gpu_test {
namespace stacks_detail {

// Decimal digits of v at the end of buf; returns where they start.
inline char* decimal(long v, char* end) {
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  return p;
}

inline void writeText(const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

inline void writeOwnStack(int) {
  const int saved = errno;
  void* frames[48];
  const int n = backtrace(frames, 48);
  char buf[32];
  char* digits = decimal(static_cast<long>(syscall(SYS_gettid)), buf + sizeof(buf) - 1);
  buf[sizeof(buf) - 1] = '\n';
  writeText("== stack of thread ", 19);
  writeText(digits, static_cast<size_t>(buf + sizeof(buf) - digits));
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  errno = saved;
}

inline void* watch(void*) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    const long self = static_cast<long>(syscall(SYS_gettid));
    writeText("== SIGUSR1: the stack of every thread follows\n", 46);
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) continue;
    while (dirent* e = readdir(dir)) {
      const long tid = std::strtol(e->d_name, nullptr, 10);
      if (tid <= 0 || tid == self) continue;
      syscall(SYS_tgkill, static_cast<long>(getpid()), tid, SIGUSR2);
      usleep(20 * 1000);  // one thread's lines at a time
    }
    closedir(dir);
    writeText("== end of stacks\n", 17);
    // timeout(1) signals the process and then its group: one dump is enough.
    timespec none = {0, 0};
    while (sigtimedwait(&set, nullptr, &none) > 0) {
    }
  }
  return nullptr;
}

}  // namespace stacks_detail

// Returns true once installed (for a static initialiser: `static const bool
// kStacks = gpu_test::installStackDumper();`).
inline bool installStackDumper() {
  void* warm[1];
  backtrace(warm, 1);  // the first call loads the unwinder: not in a handler
  struct sigaction sa = {};
  sa.sa_handler = stacks_detail::writeOwnStack;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR2, &sa, nullptr) != 0) return false;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return false;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, stacks_detail::watch, nullptr) != 0) return false;
  pthread_detach(thread);
  return true;
}

}  // namespace gpu_test
