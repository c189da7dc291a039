// TCP's large-call connections are opened on first use (tcp_transport.h): after
// init a rank holds one connection per peer; a small allreduce opens nothing;
// the first large ring allreduce opens lanes to its two ring neighbours only
// (2 directions x WEFT_SOCKET_LANES each), and the next opens nothing more.
// Every result is checked. Run with WEFT_SHM_DISABLE=1 WEFT_ALGO=ring.
//   weft-run -n N mp_tcp_lanes
#include <dirent.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int rank = 0, nranks = 1, failures = 0;

// TCP sockets this process holds now (descriptors that name a socket).
int sockets() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    char path[300], target[64];
    std::snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof(target) - 1);
    if (len > 0 && std::strncmp(target, "socket:", 7) == 0) ++n;
  }
  closedir(d);
  return n;
}

void allreduce(weftComm_t comm, size_t count, int tag) {
  std::vector<float> in(count), out(count, -1.0f);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>((i % 7) + rank + tag);
  if (weftAllReduce(in.data(), out.data(), count, weftFloat32, weftSum, comm, nullptr) !=
      weftSuccess) {
    std::printf("rank %d: FAIL allreduce of %zu: %s\n", rank, count, weftGetLastError(nullptr));
    ++failures;
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int p = 0; p < nranks; ++p) want += static_cast<float>((i % 7) + p + tag);
    if (out[i] != want) {
      std::printf("rank %d: FAIL element %zu is %g, want %g\n", rank, i, out[i], want);
      ++failures;
      return;
    }
  }
}

void expect(bool ok, const char* what, int got, int want) {
  std::printf("rank %d: %s: %d socket(s)%s (want %s%d)\n", rank, what, got, ok ? "" : ", FAIL",
              want == nranks - 1 ? "one per peer, " : "", want);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  const int lanes =
      std::atoi(std::getenv("WEFT_SOCKET_LANES") ? std::getenv("WEFT_SOCKET_LANES") : "2");
  const int neighbours = nranks > 2 ? 2 : 1;
  const int atInit = sockets();
  // Connection A to every peer, and a few of the bootstrap's own (listener,
  // ring, root) and the library's: nowhere near lanes to every peer.
  expect(atInit >= nranks - 1 && atInit < (nranks - 1) + 2 * lanes * (nranks - 1), "after init",
         atInit, nranks - 1);
  allreduce(comm, 1000, 1);  // 4 KB: below WEFT_SOCKET_PER_DIRECTION
  expect(sockets() == atInit, "after a small allreduce", sockets(), atInit);
  allreduce(comm, 1 << 20, 2);  // 4 MiB: lanes to the two ring neighbours
  const int want = atInit + neighbours * 2 * lanes;
  expect(sockets() == want, "after a large ring allreduce", sockets(), want);
  allreduce(comm, 1 << 20, 3);
  expect(sockets() == want, "after another", sockets(), want);
  weftCommDestroy(comm);
  std::printf("rank %d: %s\n", rank, failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
