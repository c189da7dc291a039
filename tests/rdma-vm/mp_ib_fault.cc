// mp_ib_fault: allreduces over verbs while ib_fault_inject.cc breaks one
// rank's verbs calls (WEFT_TEST_IB_FAULT). Run in the Soft-RoCE guest as
//   weft-run -n N mp_ib_fault --expect error|success
// "error": every rank's job must fail with a weft error within WEFT_TIMEOUT +
// 2 s, the faulted rank's sentence naming verbs or the peer; "success" (the
// delay fault): every allreduce completes with the right sum. Prints one
// FAULT-OK line per rank, or UNEXPECTED lines; exits 0 only when as expected.
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" void ib_fault_arm();  // ib_fault_inject.cc

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--expect") != 0) {
    std::fprintf(stderr, "usage: mp_ib_fault --expect error|success\n");
    return 2;
  }
  const bool expectError = std::strcmp(argv[2], "error") == 0;
  weftComm_t comm;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("UNEXPECTED: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  ib_fault_arm();  // faults start with the first allreduce, not during init
  int rank = 0, n = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &n);
  const double limit = std::atof(std::getenv("WEFT_TIMEOUT") ? std::getenv("WEFT_TIMEOUT") : "300");
  std::vector<float> buf(1 << 16);
  auto start = std::chrono::steady_clock::now();
  for (int iter = 0; iter < 60; ++iter) {
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(rank + iter);
    auto t0 = std::chrono::steady_clock::now();
    weftResult_t rc = weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat, weftSum, comm,
                                    WEFT_STREAM_HOST);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != weftSuccess) {
      const std::string why = weftGetLastError(comm);
      weftCommAbort(comm);
      if (!expectError) {
        std::printf("UNEXPECTED rank %d: allreduce %d failed: %s\n", rank, iter, why.c_str());
        return 1;
      }
      if (took > limit + 2) {
        std::printf("UNEXPECTED rank %d: the error took %.1f s (WEFT_TIMEOUT %.0f)\n", rank, took,
                    limit);
        return 1;
      }
      std::printf("FAULT-OK rank %d: allreduce %d failed after %.2f s: %s\n", rank, iter, took,
                  why.c_str());
      return 0;
    }
    const float want = static_cast<float>(n * iter + n * (n - 1) / 2);
    for (float v : buf)
      if (v != want) {
        std::printf("UNEXPECTED rank %d: allreduce %d gave %g, expected %g\n", rank, iter, v, want);
        return 1;
      }
  }
  if (expectError) {
    std::printf("UNEXPECTED rank %d: 60 allreduces passed despite the fault\n", rank);
    return 1;
  }
  std::printf("FAULT-OK rank %d: 60 allreduces correct in %.2f s despite the fault\n", rank,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  weftCommDestroy(comm);
  return 0;
}
