// netns_linkcut: the link-cut fault test, run by netns_job.sh --cut NODE.
// Every rank runs checked float allreduces back to back. Rank 0 creates the
// file $WEFT_TEST_CUT_READY after a few; the script then writes the time
// (ns since the epoch) to $WEFT_TEST_CUT_AT and sets node NODE's veth port
// down, so the cut lands in the middle of a collective. A downed link gives
// TCP no EOF and no error (segments are just lost), so weft can only notice
// through WEFT_TIMEOUT: every rank, on both sides of the cut, must get
// weftTimeout or weftRemoteError within WEFT_TIMEOUT (+ a slack) of the cut,
// with a sentence naming a peer rank, and no hang. Then the ranks that can
// still reach each other (every node but NODE) build a communicator without
// the cut node's ranks (weftCommShrink) and check an allreduce on it.
// Prints one LINKCUT line per rank; exit 0 = this rank behaved as required.
//   netns_linkcut --cut-node K --ppn P [--count C]   (block placement)
#include <weft/weft.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double nowEpoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The cut time written by the script, or a negative number when it has not cut yet.
double cutTime() {
  const char* path = std::getenv("WEFT_TEST_CUT_AT");
  FILE* f = path != nullptr ? std::fopen(path, "r") : nullptr;
  if (f == nullptr) return -1;
  long long ns = -1;
  if (std::fscanf(f, "%lld", &ns) != 1) ns = -1;
  std::fclose(f);
  return ns < 0 ? -1 : ns / 1e9;
}

// One allreduce of (rank + 1) * (i + 1) per element; true when the sums are right.
weftResult_t checkedAllReduce(weftComm_t comm, int rank, int n, std::vector<float>& buf, int i,
                              bool* right) {
  for (float& x : buf) x = static_cast<float>((rank + 1) * (i % 7 + 1));
  weftResult_t r =
      weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat, weftSum, comm, WEFT_STREAM_HOST);
  const float want = static_cast<float>(n * (n + 1) / 2 * (i % 7 + 1));
  *right = true;
  if (r == weftSuccess)
    for (float x : buf) *right = *right && x == want;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int cutNode = -1, ppn = 1;
  size_t count = 1 << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--cut-node")) cutNode = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--ppn")) ppn = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--count")) count = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const char* ready = std::getenv("WEFT_TEST_CUT_READY");
  const char* timeoutText = std::getenv("WEFT_TIMEOUT");
  if (cutNode < 1 || ppn < 1 || ready == nullptr || timeoutText == nullptr) {
    std::fprintf(stderr,
                 "usage: netns_linkcut --cut-node K>=1 --ppn P [--count C], under netns_job.sh "
                 "--cut K (it sets WEFT_TEST_CUT_READY/_AT) with WEFT_TIMEOUT set\n");
    return 2;
  }
  const double timeoutSec = std::atof(timeoutText), slack = 3;
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("LINKCUT FAIL: init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, n = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &n);
  const bool onCutNode = rank / ppn == cutNode;
  std::vector<float> buf(count);

  // Allreduces until one fails (bounded: the cut must make one fail).
  const double start = nowEpoch();
  weftResult_t r = weftSuccess;
  int calls = 0;
  double callStart = start;
  for (; nowEpoch() - start < 4 * timeoutSec + 30; ++calls) {
    bool right = false;
    callStart = nowEpoch();
    r = checkedAllReduce(comm, rank, n, buf, calls, &right);
    if (r != weftSuccess) break;
    if (!right) {
      std::printf("LINKCUT FAIL rank %d: allreduce %d gave wrong sums\n", rank, calls);
      return 1;
    }
    if (rank == 0 && calls == 3) {
      std::string tmp = std::string(ready) + ".tmp";
      if (FILE* f = std::fopen(tmp.c_str(), "w")) std::fclose(f);
      std::rename(tmp.c_str(), ready);
    }
  }
  const double erred = nowEpoch(), cut = cutTime();
  const std::string why = weftGetLastError(comm);
  if (r == weftSuccess) {
    std::printf("LINKCUT FAIL rank %d: %d allreduces in %.0f s and none failed (cut %s)\n", rank,
                calls, erred - start, cut < 0 ? "never happened" : "happened");
    return 1;
  }
  if (cut < 0) {
    std::printf("LINKCUT FAIL rank %d: allreduce %d failed before the cut: %s\n", rank, calls,
                why.c_str());
    return 1;
  }
  // Some peer rank other than this one must be named ("... rank 5 ...").
  bool namesPeer = false;
  for (size_t at = why.find("rank "); at != std::string::npos; at = why.find("rank ", at + 1))
    namesPeer = namesPeer || std::atoi(why.c_str() + at + 5) != rank;
  const bool expectedCode = r == weftTimeout || r == weftRemoteError;
  const bool inTime = erred - cut <= timeoutSec + slack;
  // Informational: whether the cut hit this call mid-transfer (it started before the cut).
  std::printf(
      "LINKCUT rank %d (%s side): allreduce %d (started %.3f s %s the cut) failed %.2f s "
      "after the cut with %s: %s\n",
      rank, onCutNode ? "cut" : "connected", calls, std::fabs(cut - callStart),
      callStart <= cut ? "before" : "after", erred - cut, weftGetErrorString(r), why.c_str());
  if (!expectedCode || !inTime || !namesPeer) {
    std::printf(
        "LINKCUT FAIL rank %d: wanted weftTimeout/weftRemoteError within %.0f s naming a "
        "peer rank\n",
        rank, timeoutSec + slack);
    return 1;
  }
  if (onCutNode) {
    weftCommAbort(comm);
    return 0;
  }

  // The connected side carries on without the cut node's ranks.
  std::vector<int> gone;
  for (int p = cutNode * ppn; p < (cutNode + 1) * ppn && p < n; ++p) gone.push_back(p);
  weftComm_t small = nullptr;
  if (weftCommShrink(comm, gone.data(), static_cast<int>(gone.size()), &small) != weftSuccess) {
    std::printf("LINKCUT FAIL rank %d: weftCommShrink: %s\n", rank, weftGetLastError(comm));
    return 1;
  }
  weftCommAbort(comm);
  int newRank = 0, newN = 0;
  weftCommUserRank(small, &newRank);
  weftCommCount(small, &newN);
  bool right = false;
  r = checkedAllReduce(small, newRank, newN, buf, 0, &right);
  if (r != weftSuccess || !right || newN != n - static_cast<int>(gone.size())) {
    std::printf("LINKCUT FAIL rank %d: allreduce on the shrunk communicator (%d of %d ranks): %s\n",
                rank, newN, n, r != weftSuccess ? weftGetLastError(small) : "wrong sums");
    return 1;
  }
  std::printf("LINKCUT rank %d: shrunk to rank %d of %d, allreduce right\n", rank, newRank, newN);
  weftCommDestroy(small);
  return 0;
}
