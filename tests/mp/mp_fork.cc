// Ranks that fork after init, as a PyTorch DataLoader or a subprocess call
// does: the child inherits the communicator's sockets, shared segments and
// (copies of) its threads' memory, but not the threads. A child that exits
// through exit() runs atexit handlers and static destructors; one that stays
// alive holds the inherited descriptors open while the parent keeps calling.
// Neither may disturb the parent's communicator: every collective before,
// between and after must give the right values, and a child that calls weft
// on the inherited communicator must be refused (weftInvalidUsage), not send
// anything on the parent's connections.
//   weft-run -n N mp_fork
#include <sys/wait.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int rank = 0, nranks = 1, failures = 0;

// An allreduce and an allgather of `count` floats, checked.
void check(weftComm_t comm, size_t count, int tag) {
  std::vector<float> in(count), out(count, -1.0f), all(count * nranks, -1.0f);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>((i % 13) + rank + tag);
  weftResult_t r = weftAllReduce(in.data(), out.data(), count, weftFloat32, weftSum, comm, nullptr);
  if (r == weftSuccess) r = weftAllGather(in.data(), all.data(), count, weftFloat32, comm, nullptr);
  if (r != weftSuccess) {
    std::printf("rank %d: FAIL step %d count %zu: %s\n", rank, tag, count,
                weftGetLastError(nullptr));
    ++failures;
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int p = 0; p < nranks; ++p) want += static_cast<float>((i % 13) + p + tag);
    if (out[i] != want) {
      std::printf("rank %d: FAIL step %d allreduce element %zu is %g, want %g\n", rank, tag, i,
                  out[i], want);
      ++failures;
      return;
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const float want = static_cast<float>(((i % count) % 13) + i / count + tag);
    if (all[i] != want) {
      std::printf("rank %d: FAIL step %d allgather element %zu is %g, want %g\n", rank, tag, i,
                  all[i], want);
      ++failures;
      return;
    }
  }
}

void checkSizes(weftComm_t comm, int tag) {
  for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 18, size_t{1} << 20})
    check(comm, count, tag);
}

// The child's exit status: 0 if its use of the inherited communicator was
// refused as it should be, 1 otherwise.
int childTriesTheCommunicator(weftComm_t comm) {
  float x = 1;
  weftResult_t r = weftAllReduce(&x, &x, 1, weftFloat32, weftSum, comm, nullptr);
  return r == weftInvalidUsage ? 0 : 1;
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("mp_fork: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  checkSizes(comm, 0);

  // 1. A child that tries the communicator, then exits through exit().
  pid_t child = fork();
  if (child == 0) std::exit(childTriesTheCommunicator(comm));
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf(
        "rank %d: FAIL a forked child's call on the inherited communicator was not "
        "refused with weftInvalidUsage (status %d)\n",
        rank, status);
    ++failures;
  }
  checkSizes(comm, 1);

  // 2. A child that stays alive, holding the inherited descriptors, while the
  //    parent calls; then exits through exit() in the middle of the calls.
  child = fork();
  if (child == 0) {
    usleep(300000);
    std::exit(0);
  }
  for (int k = 0; k < 8; ++k) checkSizes(comm, 2 + k);
  waitpid(child, &status, 0);

  // 3. A child that leaves through _exit() (no destructors), as exec failures do.
  child = fork();
  if (child == 0) _exit(0);
  waitpid(child, &status, 0);
  checkSizes(comm, 20);

  std::printf("rank %d: %s (%d failures)\n", rank, failures == 0 ? "ok" : "FAILED", failures);
  weftCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}
