// Buffers reused the moment a call returns (allreduce, then allgather). A transport may send bytes
// by reference (TCP: splice_sender.h), and then the receiver reads the sender's own pages: if weft
// let a call return before the next rank had read what it was sent, a caller that writes its
// buffers right after the call would corrupt that rank's result. So here every other rank scribbles
// over its input and output as soon as each allreduce returns, and the ranks between them (whose
// previous rank scribbles) check their results. The roles swap every round; in and out of place
// alternate.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mp_common.h"

namespace mp {

namespace {

// Compares got[i] with want(i) for every i; one pass, or one failure line
// with the count of wrong elements and the first of them.
template <typename Want>
void expectValues(Log& log, const std::string& what, const int32_t* got, size_t count, Want want) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    if (got[i] == want(i)) continue;
    if (bad++ == 0) first = i;
  }
  if (bad == 0) {
    log.pass();
    return;
  }
  log.fail(what + ": " + std::to_string(bad) + " wrong element(s), first at index " +
           std::to_string(first) + ": got " + std::to_string(got[first]));
}

bool reuseRounds(const Job& job, Log& log, size_t count) {
  std::vector<int32_t> send(count), out(count);
  for (int round = 0; round < 8; ++round) {
    const bool inPlace = round % 2 == 1;
    const bool scribbler = (round + job.rank) % 2 == 0;
    for (size_t i = 0; i < count; ++i) send[i] = static_cast<int32_t>(i % 1009) + round + job.rank;
    int32_t* recv = inPlace ? send.data() : out.data();
    weftResult_t r =
        weftAllReduce(send.data(), recv, count, weftInt32, weftSum, job.comm, WEFT_STREAM_HOST);
    if (scribbler) {  // at once: the peers may still be reading what we sent
      std::memset(send.data(), 0xee, count * sizeof(int32_t));
      std::memset(out.data(), 0xee, count * sizeof(int32_t));
    }
    const std::string what = "reuse round " + std::to_string(round) +
                             (inPlace ? " in place" : " out of place") +
                             " count=" + std::to_string(count);
    if (r != weftSuccess) {
      log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
      return false;
    }
    if (scribbler) continue;
    const int64_t n = job.nranks;
    expectValues(log, what, recv, count, [&](size_t i) {
      return n * (static_cast<int64_t>(i % 1009) + round) + n * (n - 1) / 2;
    });
  }
  return true;
}

// The same for allgather: rank r's block holds (i % 1009) + round + 7 r.
bool reuseAllGather(const Job& job, Log& log, size_t count) {
  std::vector<int32_t> send(count), out(count * job.nranks);
  for (int round = 0; round < 8; ++round) {
    const bool scribbler = (round + job.rank) % 2 == 0;
    for (size_t i = 0; i < count; ++i)
      send[i] = static_cast<int32_t>(i % 1009) + round + 7 * job.rank;
    weftResult_t r =
        weftAllGather(send.data(), out.data(), count, weftInt32, job.comm, WEFT_STREAM_HOST);
    if (scribbler) {
      std::memset(send.data(), 0xee, count * sizeof(int32_t));
      std::memset(out.data(), 0xee, out.size() * sizeof(int32_t));
    }
    const std::string what =
        "reuse allgather round " + std::to_string(round) + " count=" + std::to_string(count);
    if (r != weftSuccess) {
      log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
      return false;
    }
    if (scribbler) continue;
    expectValues(log, what, out.data(), out.size(), [&](size_t j) {
      return static_cast<int64_t>(j % count % 1009) + round + 7 * static_cast<int64_t>(j / count);
    });
  }
  return true;
}

}  // namespace

// 512 KiB (sent by reference under the default WEFT_SOCKET_SPLICE_MAX) and at
// least 4 MiB (by reference where a test raises it).
void checkReuse(const Job& job, Log& log) {
  if (reuseRounds(job, log, 128 << 10) &&
      reuseRounds(job, log, std::max<size_t>(job.largeCount, 1 << 20)))
    reuseAllGather(job, log, (1 << 20) / job.nranks);
}

}  // namespace mp
