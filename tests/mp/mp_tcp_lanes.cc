// TCP's connections are opened on first use (tcp_transport.h,
// lazy_connection.h): after init a rank holds no connection to its peers; a
// small ring allreduce connects connection A to the peers it exchanges with
// (its two ring neighbours, and with the call check on, WEFT_CHECK_CALLS=1,
// the ranks the check's schedule pairs it with: all of them up to
// WEFT_CHECK_RADIX ranks, then j * R^k ahead and behind) and opens no lanes; the
// first large ring allreduce opens lanes to its two ring neighbours only
// (2 directions x WEFT_SOCKET_LANES each), and the next opens nothing more.
// A large all-to-all on 3 or more ranks then moves each peer's block on one
// lane (ChannelTable::setWide): as many sockets received a whole block as
// there are peers, and none got only part of one, as striping would leave;
// a ring allreduce striped again after it still adds up. Every result is
// checked. Run with WEFT_SHM_DISABLE=1 WEFT_ALGO=ring and
// WEFT_TUNE_SHM set (else rank 0 measures a link with rank 1 at init, over a
// connection of its own).
//   weft-run -n N mp_tcp_lanes
#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace {

int rank = 0, nranks = 1, failures = 0;

// Established TCP connections this process holds now: its socket
// descriptors whose inode /proc/net/tcp{,6} lists in state 01. A listener is
// not one, nor a connection that lost the race to be a pair's connection A
// and was closed by its peer (lazy_connection.h) while it waits among the
// bootstrap's arrivals.
int sockets(std::map<int, unsigned long long>* received = nullptr) {
  std::set<unsigned long> established;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::FILE* f = std::fopen(table, "r");
    if (f == nullptr) continue;
    char line[512];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      char state[8] = {};
      unsigned long inode = 0;
      // sl local remote st tx:rx tr:when retrnsmt uid timeout inode
      if (std::sscanf(line, "%*s %*s %*s %7s %*s %*s %*s %*s %*s %lu", state, &inode) == 2 &&
          std::strcmp(state, "01") == 0)
        established.insert(inode);
    }
    std::fclose(f);
  }
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    char path[300], target[64];
    std::snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof(target) - 1);
    if (len <= 0) continue;
    target[len] = '\0';
    unsigned long inode = 0;
    if (std::sscanf(target, "socket:[%lu]", &inode) != 1 || established.count(inode) == 0) continue;
    ++n;
    if (received != nullptr) {
      tcp_info info{};
      socklen_t len = sizeof(info);
      const int fd = std::atoi(e->d_name);
      if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0)
        (*received)[fd] = info.tcpi_bytes_received;
    }
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

// A large all-to-all, checked; *full and *part: the sockets that received a
// whole block during it, and those that received a quarter to three
// quarters of one (a lane's share when a block is striped over two).
void allToAll(weftComm_t comm, size_t count, int* full, int* part) {
  std::vector<float> in(count * nranks), out(count * nranks, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 1000 + rank * 1000);
  std::map<int, unsigned long long> before, after;
  sockets(&before);
  // No peer's block may reach us before we counted (the kernel takes it unasked).
  if (weftBarrier(comm, nullptr) != weftSuccess) ++failures;
  if (weftAllToAll(in.data(), out.data(), count, weftFloat32, comm, nullptr) != weftSuccess) {
    std::printf("rank %d: FAIL all-to-all of %zu: %s\n", rank, count, weftGetLastError(nullptr));
    ++failures;
    return;
  }
  sockets(&after);
  // Nor any byte of the next call before we counted again.
  if (weftBarrier(comm, nullptr) != weftSuccess) ++failures;
  const unsigned long long block = count * sizeof(float);
  *full = *part = 0;
  for (const auto& s : after) {
    const unsigned long long got = s.second - (before.count(s.first) ? before[s.first] : 0);
    if (got >= block) ++*full;
    if (got >= block / 4 && got <= block * 3 / 4) ++*part;
  }
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i) {
      // Peer p's block for us: its elements rank * count + i.
      const float want = static_cast<float>((rank * count + i) % 1000 + p * 1000);
      if (out[p * count + i] != want) {
        std::printf("rank %d: FAIL all-to-all element %zu from %d is %g, want %g\n", rank, i, p,
                    out[p * count + i], want);
        ++failures;
        return;
      }
    }
}

void expect(bool ok, const char* what, int got, int want) {
  std::printf("rank %d: %s: %d socket(s)%s (want %d)\n", rank, what, got, ok ? "" : ", FAIL", want);
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
  const char* check = std::getenv("WEFT_CHECK_CALLS");
  const bool checked = check == nullptr || std::strcmp(check, "0") != 0;
  const int neighbours = nranks > 2 ? 2 : 1;
  const char* radixEnv = std::getenv("WEFT_CHECK_RADIX");
  const long radix = radixEnv != nullptr ? std::atol(radixEnv) : 8;
  std::set<int> talksTo = {(rank + 1) % nranks, (rank + nranks - 1) % nranks};
  for (long stride = 1; checked && stride < nranks; stride *= radix)
    for (long j = 1; j < radix && j * stride < nranks; ++j) {
      talksTo.insert(static_cast<int>((rank + j * stride) % nranks));
      talksTo.insert(static_cast<int>((rank + nranks - j * stride % nranks) % nranks));
    }
  talksTo.erase(rank);
  // The bootstrap's own (two per step of its allgather, the first its ring)
  // and one more at most: no connection A to any peer yet.
  int steps = 0;
  while ((1 << steps) < nranks) ++steps;
  const int atInit = sockets();
  expect(atInit <= 2 * steps + 1, "after init", atInit, 2 * steps + 1);
  allreduce(comm, 1000, 1);  // 4 KB: below WEFT_SOCKET_PER_DIRECTION
  const int small = atInit + static_cast<int>(talksTo.size());
  expect(sockets() == small, "after a small allreduce", sockets(), small);
  allreduce(comm, 1 << 20, 2);  // 4 MiB: lanes to the two ring neighbours
  const int want = small + neighbours * 2 * lanes;
  expect(sockets() == want, "after a large ring allreduce", sockets(), want);
  allreduce(comm, 1 << 20, 3);
  expect(sockets() == want, "after another", sockets(), want);
  if (nranks > 2 && lanes > 1) {
    int full = 0, part = 0;
    allToAll(comm, 1 << 18, &full, &part);  // 1 MiB blocks
    expect(full == nranks - 1, "whole blocks received in an all-to-all", full, nranks - 1);
    expect(part == 0, "part blocks received in an all-to-all", part, 0);
    allreduce(comm, (1 << 20) + 12345, 5);  // striped again, from a piece's middle
  }
  allreduce(comm, 10, 4);  // no rank closes its connections before all have counted
  weftCommDestroy(comm);
  std::printf("rank %d: %s\n", rank, failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
