// base/fork_close.h: a child forked without exec closes the registered
// descriptors (so peers see this process's death when it dies), and keeps
// those taken out of the registry.
#include "base/fork_close.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// In a forked child: 0 when `closed` is closed and `open` still open.
int childSees(int closed, int open) {
  const pid_t pid = fork();
  if (pid == 0) {
    const bool gone = fcntl(closed, F_GETFD) == -1;
    const bool kept = fcntl(open, F_GETFD) != -1;
    _exit(gone && kept ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

TEST(ForkClose, ChildClosesRegisteredDescriptorsAndKeepsOthers) {
  int a[2], b[2];
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  const int before = weft::forkClosedCount();
  weft::closeInForkedChildren(a[0]);
  weft::closeInForkedChildren(b[0]);
  EXPECT_EQ(weft::forkClosedCount(), before + 2);
  EXPECT_EQ(childSees(a[0], a[1]), 0);
  EXPECT_EQ(childSees(b[0], b[1]), 0);
  // The parent's copies stay open.
  EXPECT_NE(fcntl(a[0], F_GETFD), -1);
  // Taken out: the child keeps it.
  weft::keepInForkedChildren(b[0]);
  EXPECT_EQ(weft::forkClosedCount(), before + 1);
  EXPECT_EQ(childSees(a[0], b[0]), 0);
  weft::keepInForkedChildren(a[0]);
  EXPECT_EQ(weft::forkClosedCount(), before);
  for (int fd : {a[0], a[1], b[0], b[1]}) close(fd);
}

// The end of file a peer waits for: with the parent's end closed, a child
// that inherited the write end no longer holds the pipe open.
TEST(ForkClose, PeerSeesTheEndWhileAForkedChildLives) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  weft::closeInForkedChildren(p[1]);
  const pid_t child = fork();
  if (child == 0) {
    pause();  // an idle worker, killed below
    _exit(0);
  }
  weft::keepInForkedChildren(p[1]);
  close(p[1]);
  // End of file now, not when the child exits (bounded: a failure must not hang).
  pollfd pfd{p[0], POLLIN, 0};
  const int ready = poll(&pfd, 1, 10000);
  char byte = 0;
  const ssize_t got = ready == 1 ? read(p[0], &byte, 1) : -1;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(p[0]);
  EXPECT_EQ(ready, 1);
  EXPECT_EQ(got, 0);
}

}  // namespace
