// What a communicator costs a rank to build: one process of a job under a
// launcher (weft-run), which times weftCommInitFromEnv and reads what the
// process holds before and after it, then prints one line for
// perf/init_scale.py:
//   INIT rank R of N: S s, pss +K KiB, rss +K KiB, mapped +K KiB, fds +F
// pss is the proportional set size: pages shared with the node's other ranks
// (their shared-memory FIFOs, mapped by all) count a share each, so the sum
// over ranks is the node's memory; rss counts them whole in every rank.
// One 8-byte allreduce after init checks that the communicator works; its
// time and the descriptors held after it are printed too ("first call": TCP
// connections are made on first use, tcp/lazy_connection.h).
#include <dirent.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

// A field of a /proc/self file in KiB (status: VmRSS, VmSize; smaps_rollup: Pss).
long procKib(const char* file, const char* field) {
  FILE* f = std::fopen(file, "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, field, len) == 0 && line[len] == ':') kib = std::atol(line + len + 1);
  std::fclose(f);
  return kib;
}

long openFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  long n = 0;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n - 3;  // ".", "..", and the directory's own descriptor
}

}  // namespace

int main() {
  const char* status = "/proc/self/status";
  const char* rollup = "/proc/self/smaps_rollup";
  const long pss0 = procKib(rollup, "Pss"), rss0 = procKib(status, "VmRSS");
  const long vm0 = procKib(status, "VmSize"), fds0 = openFds();
  const auto t0 = std::chrono::steady_clock::now();
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::fprintf(stderr, "init_probe: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long pss1 = procKib(rollup, "Pss"), rss1 = procKib(status, "VmRSS");
  const long vm1 = procKib(status, "VmSize"), fds1 = openFds();
  int rank = 0, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  double one = 1, sum = 0;
  const auto t1 = std::chrono::steady_clock::now();
  const weftResult_t r = weftAllReduce(&one, &sum, 1, weftFloat64, weftSum, comm, nullptr);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const long fds2 = openFds();
  if (r != weftSuccess || sum != nranks) {
    std::fprintf(stderr, "init_probe: the allreduce after init failed: %s\n",
                 weftGetLastError(nullptr));
    return 1;
  }
  std::printf(
      "INIT rank %d of %d: %.4f s, pss +%ld KiB, rss +%ld KiB, mapped +%ld KiB, fds +%ld; first "
      "call %.4f s, fds +%ld\n",
      rank, nranks, seconds, pss1 - pss0, rss1 - rss0, vm1 - vm0, fds1 - fds0, first, fds2 - fds0);
  weftCommDestroy(comm);
  return 0;
}
