// Collectives while signals rain on every rank: profilers (SIGPROF), timers
// (SIGALRM) and language runtimes (Go's SIGURG, Python's handlers) interrupt
// blocking syscalls, which then fail with EINTR when the handler was
// installed without SA_RESTART, as here. Every wait of weft (poll, recv,
// send, splice, futex, nanosleep) must retry instead of reporting an error,
// losing bytes or stalling. Each rank gets SIGALRM every 500 us of wall time
// and SIGPROF every 700 us of CPU time (delivered to any of its threads,
// progress threads included) while it runs allreduce, allgather, broadcast,
// a barrier and a send/recv ring at 1 element to 4 Mi elements, each checked
// against values computed here. The run fails if fewer than 200 signals
// arrived (the test would then prove nothing).
//   weft-run -n N mp_signals
#include <signal.h>
#include <sys/time.h>
#include <weft/weft.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::atomic<long> signalsSeen{0};
void onSignal(int) { signalsSeen.fetch_add(1, std::memory_order_relaxed); }

void startSignals() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = onSignal;  // no SA_RESTART: interrupted syscalls return EINTR
  sigaction(SIGALRM, &sa, nullptr);
  sigaction(SIGPROF, &sa, nullptr);
  const itimerval real = {{0, 500}, {0, 500}}, prof = {{0, 700}, {0, 700}};
  setitimer(ITIMER_REAL, &real, nullptr);
  setitimer(ITIMER_PROF, &prof, nullptr);
}

void stopSignals() {
  const itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, nullptr);
  setitimer(ITIMER_PROF, &off, nullptr);
}

struct Run {
  weftComm_t comm;
  int rank, n;
  int failures = 0, checked = 0;

  bool ok(weftResult_t r, const char* what, size_t count) {
    if (r == weftSuccess) return true;
    std::printf("rank %d: FAIL %s count %zu: %s: %s\n", rank, what, count, weftGetErrorString(r),
                weftGetLastError(nullptr));
    ++failures;
    return false;
  }
  // Float values that add exactly: small integers.
  static float value(int r, size_t i, int it) {
    return static_cast<float>((i * 7 + r * 3 + it) % 97);
  }

  void expect(const std::vector<float>& got, const char* what, size_t count,
              float (*want)(const Run&, size_t, int), int it) {
    ++checked;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want(*this, i, it)) {
        std::printf("rank %d: FAIL %s count %zu iteration %d: element %zu is %g, want %g\n", rank,
                    what, count, it, i, got[i], want(*this, i, it));
        ++failures;
        return;
      }
  }

  void allreduce(size_t count, int it) {
    std::vector<float> in(count), out(count, -1.0f);
    for (size_t i = 0; i < count; ++i) in[i] = value(rank, i, it);
    if (!ok(weftAllReduce(in.data(), out.data(), count, weftFloat32, weftSum, comm, nullptr),
            "allreduce", count))
      return;
    expect(
        out, "allreduce", count,
        [](const Run& r, size_t i, int iter) {
          float s = 0;
          for (int p = 0; p < r.n; ++p) s += value(p, i, iter);
          return s;
        },
        it);
  }

  void allgather(size_t count, int it) {
    std::vector<float> in(count), out(count * n, -1.0f);
    for (size_t i = 0; i < count; ++i) in[i] = value(rank, i, it);
    if (!ok(weftAllGather(in.data(), out.data(), count, weftFloat32, comm, nullptr), "allgather",
            count))
      return;
    gatheredCount = count;
    expect(
        out, "allgather", count,
        [](const Run& r, size_t i, int iter) {
          return value(static_cast<int>(i / r.gatheredCount), i % r.gatheredCount, iter);
        },
        it);
  }
  size_t gatheredCount = 0;

  void broadcast(size_t count, int it) {
    const int root = it % n;
    std::vector<float> buf(count, -1.0f);
    if (rank == root)
      for (size_t i = 0; i < count; ++i) buf[i] = value(root, i, it);
    if (!ok(weftBroadcast(buf.data(), buf.data(), count, weftFloat32, root, comm, nullptr),
            "broadcast", count))
      return;
    expect(
        buf, "broadcast", count,
        [](const Run& r, size_t i, int iter) { return value(iter % r.n, i, iter); }, it);
  }

  void ring(size_t count, int it) {
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    std::vector<float> out(count), in(count, -1.0f);
    for (size_t i = 0; i < count; ++i) out[i] = value(rank, i, it);
    weftGroupStart();
    weftResult_t s = weftSend(out.data(), count, weftFloat32, next, comm, nullptr);
    weftResult_t r = weftRecv(in.data(), count, weftFloat32, prev, comm, nullptr);
    weftResult_t e = weftGroupEnd();
    if (!ok(s, "send", count) || !ok(r, "recv", count) || !ok(e, "send/recv group", count)) return;
    expect(
        in, "send/recv ring", count,
        [](const Run& run, size_t i, int iter) {
          return value((run.rank + run.n - 1) % run.n, i, iter);
        },
        it);
  }
};

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("mp_signals: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  Run run{comm, 0, 1};
  weftCommUserRank(comm, &run.rank);
  weftCommCount(comm, &run.n);
  startSignals();
  const size_t counts[] = {1, 7, 1000, 65536, 1 << 20, 4 << 20};
  for (size_t count : counts)
    for (int it = 0; it < (count >= (1u << 20) ? 3 : 8) && run.failures == 0; ++it) {
      run.allreduce(count, it);
      run.allgather(count >= (4u << 20) ? count / 4 : count, it);
      run.broadcast(count, it);
      run.ring(count, it);
      run.ok(weftBarrier(comm, nullptr), "barrier", 0);
    }
  stopSignals();
  const long seen = signalsSeen.load();
  if (seen < 200) {
    std::printf("rank %d: FAIL only %ld signals arrived during the run (want 200 or more)\n",
                run.rank, seen);
    ++run.failures;
  }
  std::printf("rank %d: %d checks, %d failures, %ld signals handled\n", run.rank, run.checked,
              run.failures, seen);
  weftCommDestroy(comm);
  return run.failures == 0 ? 0 : 1;
}
