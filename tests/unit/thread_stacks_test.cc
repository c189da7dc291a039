// The GPU checks' stack dumper (tests/gpu/thread_stacks.h), which only runs
// on a lent GPU when a step hangs: a child process installs it, starts a
// thread that blocks, and signals itself SIGUSR1; its stderr must hold the
// stack of each of its threads (the blocked one included), and the child
// must go on running after the dump.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "tests/gpu/thread_stacks.h"

namespace {

int countOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

[[noreturn]] void child() {
  if (!gpu_test::installStackDumper()) _exit(2);
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::thread blocked([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return go; });
  });
  kill(getpid(), SIGUSR1);
  // The watcher visits each thread 20 ms apart; the dump interrupts sleeps.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < until) usleep(10 * 1000);
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  blocked.join();
  _exit(0);  // still alive after the dump: SIGUSR1 did not end it
}

TEST(ThreadStacks, EveryThreadWritesItsStackOnSigusr1) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    child();
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t got; (got = read(fds[0], buf, sizeof(buf))) > 0;)
    out.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_EQ(countOf(out, "== SIGUSR1"), 1) << out;
  EXPECT_EQ(countOf(out, "== end of stacks"), 1) << out;
  // The main thread and the blocked one (not the watcher, which signals).
  EXPECT_EQ(countOf(out, "== stack of thread "), 2) << out;
  EXPECT_GE(countOf(out, "[0x"), 4) << "frames missing:\n" << out;
}

}  // namespace
