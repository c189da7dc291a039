// host_alloc_perf: how long weftHostAlloc + weftHostFree take per size. The
// allocation maps and touches every page before it returns (so collectives
// do not pay for first touches), which is most of its cost: a page's first
// touch costs 6-14 us on these VMs.
//   host_alloc_perf [-b minbytes] [-e maxbytes] [-f factor] [-n iters]
#include <getopt.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "perf_args.h"

namespace {

int Usage(const char* name) {
  std::fprintf(stderr, "usage: %s [-b minbytes] [-e maxbytes] [-f factor] [-n iters]\n", name);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 64 << 10, max_bytes = 64 << 20;
  int factor = 4, iters = 20;
  for (int c; (c = getopt(argc, argv, "b:e:f:n:")) != -1;) {
    if (c == 'b' && PerfParseBytes(optarg, &min_bytes)) continue;
    if (c == 'e' && PerfParseBytes(optarg, &max_bytes)) continue;
    if (c == 'f' && (factor = std::atoi(optarg)) >= 2) continue;
    if (c == 'n' && (iters = std::atoi(optarg)) >= 1) continue;
    return Usage(argv[0]);
  }
  if (optind != argc || min_bytes == 0 || min_bytes > max_bytes) return Usage(argv[0]);
  std::printf("# %12s %14s %16s\n", "size(B)", "us per alloc", "us per page");
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<size_t>(factor)) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      void* memory = nullptr;
      if (weftHostAlloc(&memory, bytes) != weftSuccess || weftHostFree(memory) != weftSuccess) {
        std::fprintf(stderr, "%s: %s\n", argv[0], weftGetLastError(nullptr));
        return 1;
      }
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    const double pages = static_cast<double>(bytes) / 4096.0;
    std::printf("  %12zu %14.1f %16.3f\n", bytes, elapsed.count() / iters,
                elapsed.count() / iters / pages);
  }
  return 0;
}
