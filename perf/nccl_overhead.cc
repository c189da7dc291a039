// nccl_overhead: what the NCCL drop-in (integrations/nccl) adds to a call. In
// one process per rank, the same blocking host allreduce is timed through
// weft.h (libweft.so) and through nccl.h (the drop-in, which holds its own
// copy of weft), in alternating rounds so that both see the same machine;
// reports each round's mean time per call and the medians' ratio.
//
//   weft-run -n 2 nccl_overhead [-b BYTES] [-n CALLS] [-r ROUNDS]
#include <nccl.h>
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double usPerCall(Clock::time_point t0, int calls) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 8;
  int calls = 2000, rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-b")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "-n")) calls = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "-r")) rounds = std::atoi(argv[i + 1]);
  }
  weftComm_t wcomm;
  if (weftCommInitFromEnv(&wcomm) != weftSuccess) {
    std::fprintf(stderr, "nccl_overhead: %s (run under weft-run)\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 0;
  weftCommUserRank(wcomm, &rank);
  weftCommCount(wcomm, &nranks);
  ncclUniqueId id;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return 1;
  weftBcast(&id, sizeof(id), weftUint8, 0, wcomm, WEFT_STREAM_HOST);
  ncclComm_t ncomm;
  if (ncclCommInitRank(&ncomm, nranks, id, rank) != ncclSuccess) {
    std::fprintf(stderr, "nccl_overhead: %s\n", ncclGetLastError(nullptr));
    return 1;
  }
  const size_t count = std::max<size_t>(bytes / sizeof(float), 1);
  std::vector<float> buf(count, 1.0f);
  std::vector<double> viaWeft, viaNccl;
  for (int r = -1; r < rounds; ++r) {  // round -1 warms both up
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
      weftAllReduce(buf.data(), buf.data(), count, weftFloat, weftSum, wcomm, WEFT_STREAM_HOST);
    const double w = usPerCall(t0, calls);
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
      ncclAllReduce(buf.data(), buf.data(), count, ncclFloat, ncclSum, ncomm, nullptr);
    const double n = usPerCall(t0, calls);
    if (r < 0) continue;
    viaWeft.push_back(w);
    viaNccl.push_back(n);
    if (rank == 0) std::printf("round %d: weft.h %.2f us, nccl.h %.2f us per call\n", r, w, n);
  }
  if (rank == 0)
    std::printf(
        "%zu B allreduce, %d ranks, median of %d rounds of %d calls: weft.h %.2f us, "
        "nccl.h (drop-in) %.2f us, ratio %.3f\n",
        count * sizeof(float), nranks, rounds, calls, median(viaWeft), median(viaNccl),
        median(viaNccl) / median(viaWeft));
  ncclCommDestroy(ncomm);
  weftCommDestroy(wcomm);
  return 0;
}
