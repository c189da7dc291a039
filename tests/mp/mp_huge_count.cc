// Counts past INT_MAX: an in-place int8 allreduce of 2^31 + 5 elements and an
// allgather whose gathered total passes 2^31 bytes, so that any 32-bit count,
// offset or byte size on the way (call header, chunking, FIFO or socket
// offsets, reduction loops) shows up as a wrong element, an error or a crash.
// The values depend on every bit of the index, so a slice written at a wrong
// offset does not match. Needs about 3 GiB per rank: skipped (exit 77, with
// the reason) where the machine has less than 4 GiB per rank available.
//   weft-run -n 2 mp_huge_count
#include <sys/mman.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

// 0..63 from every bit of i, plus the rank: a 2-rank sum stays below 128.
inline int8_t value(uint64_t i, int rank) {
  return static_cast<int8_t>(((i * 0x9E3779B97F4A7C15ull) >> 58) + static_cast<uint64_t>(rank));
}

long memAvailableMiB() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0) return std::atol(line.c_str() + 13) / 1024;
  return -1;
}

// `bytes` of fresh memory on transparent huge pages where the kernel has them:
// on 4 KiB pages these VMs spend about 14 us faulting each page, 11 s for the
// 3 GiB a rank touches here.
int8_t* bigBuffer(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<int8_t*>(p);
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("mp_huge_count: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, n = 1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &n);
  // Every rank decides alike: the least memory any rank sees.
  long avail = memAvailableMiB(), least = avail;
  if (weftAllReduce(&avail, &least, 1, weftInt64, weftMin, comm, nullptr) != weftSuccess) {
    std::printf("rank %d: FAIL the memory check's allreduce: %s\n", rank,
                weftGetLastError(nullptr));
    return 1;
  }
  if (n != 2 || least < 4096L * n) {
    if (rank == 0)
      std::printf("SKIPPED: needs 2 ranks and %ld MiB of available memory (%d ranks, %ld MiB)\n",
                  4096L * 2, n, least);
    weftCommDestroy(comm);
    return 77;
  }
  int failures = 0;

  const size_t count = (size_t{1} << 31) + 5;
  {
    int8_t* buf = bigBuffer(count);
    if (buf == nullptr) return 1;
    for (size_t i = 0; i < count; ++i) buf[i] = value(i, rank);
    const auto t0 = std::chrono::steady_clock::now();
    weftResult_t r = weftAllReduce(buf, buf, count, weftInt8, weftSum, comm, nullptr);
    const double secs = since(t0);
    if (r != weftSuccess) {
      std::printf("rank %d: FAIL allreduce of %zu int8: %s\n", rank, count,
                  weftGetLastError(nullptr));
      ++failures;
    } else {
      for (size_t i = 0; i < count; ++i)
        if (buf[i] != static_cast<int8_t>(value(i, 0) + value(i, 1))) {
          std::printf("rank %d: FAIL allreduce element %zu is %d, want %d\n", rank, i, buf[i],
                      value(i, 0) + value(i, 1));
          ++failures;
          break;
        }
      std::printf("rank %d: allreduce of %zu int8 in place: %.2f s\n", rank, count, secs);
    }
    munmap(buf, count);
  }
  const size_t each = (size_t{1} << 30) + 3;  // gathered: 2^31 + 6 bytes
  {
    int8_t* mine = bigBuffer(each);
    int8_t* all = bigBuffer(each * n);
    if (mine == nullptr || all == nullptr) return 1;
    for (size_t i = 0; i < each; ++i) mine[i] = value(i + rank * each, 0);
    if (weftAllGather(mine, all, each, weftInt8, comm, nullptr) != weftSuccess) {
      std::printf("rank %d: FAIL allgather of %zu int8 per rank: %s\n", rank, each,
                  weftGetLastError(nullptr));
      ++failures;
    } else {
      for (size_t i = 0; i < each * n; ++i)
        if (all[i] != value(i, 0)) {
          std::printf("rank %d: FAIL allgather element %zu is %d, want %d\n", rank, i, all[i],
                      value(i, 0));
          ++failures;
          break;
        }
    }
    munmap(mine, each);
    munmap(all, each * n);
  }
  std::printf("rank %d: %s\n", rank, failures == 0 ? "ok" : "FAILED");
  weftCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}
