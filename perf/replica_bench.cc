// What replicas cost, against what they replace. Run under a launcher:
//   weft-run -n 4 replica_bench -b 64M -n 5 -d /var/tmp/ckpt
// Prints, for `bytes` of state per rank and one copy:
//   commit     the median time of weftReplicaCommit (each rank's buffer to
//              its holder), and its busbw (bytes / time);
//   sendrecv   the same bytes moved by weftSend/weftRecv in a ring (each rank
//              to the next), the traffic of a commit without its bookkeeping;
//   disk       the restart a checkpoint on local disk gives: the write (with
//              fsync) per step, and a restart's fresh communicator, read of
//              the state from the disk (the page cache dropped) and first
//              allreduce; neither the restart of the processes nor the
//              detection of the failure is counted, so it flatters the disk.
// Times are the slowest rank's, medians of -n runs.
#include <fcntl.h>
#include <unistd.h>
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  size_t bytes = 64 << 20;
  int iters = 5;
  std::string dir;  // where the disk baseline writes; empty: no disk baseline
};

void check(weftResult_t r, const char* what) {
  if (r == weftSuccess) return;
  std::fprintf(stderr, "replica_bench: %s: %s\n", what, weftGetLastError(nullptr));
  std::exit(1);
}

size_t parseSize(const char* text) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (*end == 'K' || *end == 'k') v *= 1 << 10;
  if (*end == 'M' || *end == 'm') v *= 1 << 20;
  if (*end == 'G' || *end == 'g') v *= 1 << 30;
  return static_cast<size_t>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "-b")
      o.bytes = parseSize(argv[i + 1]);
    else if (flag == "-n")
      o.iters = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "-d")
      o.dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: replica_bench [-b bytes] [-n iterations] [-d checkpoint dir]\n");
      std::exit(2);
    }
  }
  return o;
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The slowest rank's time of `fn`, the median over `iters` runs.
template <typename Fn>
double timed(weftComm_t comm, int iters, Fn fn) {
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    check(weftBarrier(comm, WEFT_STREAM_HOST), "barrier");
    const double t0 = seconds();
    fn();
    double t = seconds() - t0;
    check(weftAllReduce(&t, &t, 1, weftFloat64, weftMax, comm, WEFT_STREAM_HOST), "allreduce");
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void diskBaseline(weftComm_t comm, int rank, int nranks, const Options& o, char* state) {
  const std::string path = o.dir + "/replica_bench." + std::to_string(rank);
  const double write = timed(comm, o.iters, [&] {
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0 || ::write(fd, state, o.bytes) != static_cast<ssize_t>(o.bytes) || ::fsync(fd) != 0)
      check(weftSystemError, ("writing " + path).c_str());
    // A restarted job reads from the disk, not from this process's page cache.
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  });
  const double restart = timed(comm, o.iters, [&] {
    weftUniqueId id;
    if (rank == 0) check(weftGetUniqueId(&id), "weftGetUniqueId");
    check(weftBcast(&id, sizeof(id), weftUint8, 0, comm, WEFT_STREAM_HOST), "bcast");
    weftComm_t fresh = nullptr;
    check(weftCommInitRank(&fresh, nranks, id, rank), "a fresh communicator");
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0 || ::read(fd, state, o.bytes) != static_cast<ssize_t>(o.bytes))
      check(weftSystemError, ("reading " + path).c_str());
    ::close(fd);
    int one = 1;
    check(weftAllReduce(&one, &one, 1, weftInt, weftSum, fresh, WEFT_STREAM_HOST), "allreduce");
    weftCommDestroy(fresh);
  });
  ::unlink(path.c_str());
  if (rank == 0)
    std::printf("disk      write+fsync %8.3f s   restart (fresh comm + read + allreduce) %8.3f s\n",
                write, restart);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  weftComm_t comm = nullptr;
  check(weftCommInitFromEnv(&comm), "weftCommInitFromEnv");
  int rank = 0, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  char* state = nullptr;
  char* inbox = nullptr;
  check(weftHostAlloc(reinterpret_cast<void**>(&state), o.bytes), "weftHostAlloc");
  check(weftHostAlloc(reinterpret_cast<void**>(&inbox), o.bytes), "weftHostAlloc");
  std::memset(state, rank + 1, o.bytes);
  weftReplica_t replica = nullptr;
  check(weftReplicaRegister(comm, state, o.bytes, 1, &replica), "weftReplicaRegister");
  weftRequest_t req = nullptr;
  check(weftReplicaCommit(replica, &req), "commit");  // first: allocates the copies
  check(weftWait(&req), "commit");
  const double commit = timed(comm, o.iters, [&] {
    check(weftReplicaCommit(replica, &req), "weftReplicaCommit");
    check(weftWait(&req), "weftReplicaCommit");
  });
  const double sendrecv = timed(comm, o.iters, [&] {
    check(weftGroupStart(), "group");
    check(weftSend(state, o.bytes, weftUint8, (rank + 1) % nranks, comm, WEFT_STREAM_HOST), "send");
    check(weftRecv(inbox, o.bytes, weftUint8, (rank + nranks - 1) % nranks, comm, WEFT_STREAM_HOST),
          "recv");
    check(weftGroupEnd(), "group");
  });
  const double gb = static_cast<double>(o.bytes) / 1e9;
  if (rank == 0) {
    std::printf("# %d ranks, %zu bytes per rank, 1 copy, median of %d\n", nranks, o.bytes, o.iters);
    std::printf("commit    %8.3f s   busbw %7.3f GB/s\n", commit, gb / commit);
    std::printf("sendrecv  %8.3f s   busbw %7.3f GB/s   commit/sendrecv busbw %.2f\n", sendrecv,
                gb / sendrecv, sendrecv / commit);
  }
  if (!o.dir.empty()) diskBaseline(comm, rank, nranks, o, state);
  weftReplicaDeregister(replica);
  weftHostFree(inbox);
  weftHostFree(state);
  weftCommDestroy(comm);
  return 0;
}
