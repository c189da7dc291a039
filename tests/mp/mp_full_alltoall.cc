// All-to-all across processes: all ten datatypes, per-peer counts 0, 1, 7 and
// a large odd block, at aligned and misaligned element offsets. Block j of
// rank r's input is a byte pattern of (r, j); every rank checks that block s
// of its output is the pattern of (s, rank), the guard bytes, and that its
// input is intact; in the misaligned case it instead overwrites its input as
// soon as the call returns (peers must be done reading it).
#include <cstring>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {

bool allToAllCase(const Job& job, Log& log, weftDataType_t dt, size_t count, size_t sendOffset,
                  size_t recvOffset) {
  const size_t es = dtSize(dt), block = count * es, n = static_cast<size_t>(job.nranks);
  const std::string what = std::string("alltoall ") + dtName(dt) +
                           " count=" + std::to_string(count) + " (+" + std::to_string(sendOffset) +
                           ",+" + std::to_string(recvOffset) + " elems)";
  auto blockSeed = [&](size_t from, size_t to) { return seedOf(21, from, to, dt * 131 + count); };
  Buffer send(n * block, sendOffset * es), recv(n * block, recvOffset * es);
  for (size_t j = 0; j < n; ++j)
    fillPattern(send.data() + j * block, block, blockSeed(static_cast<size_t>(job.rank), j));
  fillPattern(recv.data(), n * block, seedOf(22, job.rank));
  weftResult_t r = weftAllToAll(send.data(), recv.data(), count, dt, job.comm, WEFT_STREAM_HOST);
  const bool scribble = sendOffset != 0 || recvOffset != 0;
  if (scribble) std::memset(send.data(), 0x5a, n * block);  // peers must be done reading it
  if (!callOk(job, log, what, r)) return false;

  bool ok = true;
  for (size_t j = 0; j < n; ++j) {
    const std::vector<unsigned char> in =
        pattern(block, blockSeed(static_cast<size_t>(job.rank), j));
    const std::vector<unsigned char> out =
        pattern(block, blockSeed(j, static_cast<size_t>(job.rank)));
    std::string diff = compareElems(dt, recv.data() + j * block, out.data(), count);
    if (!diff.empty()) {
      log.fail(what + ": block from rank " + std::to_string(j) + ": " + diff);
      ok = false;
    }
    diff = scribble ? "" : compareElems(dt, send.data() + j * block, in.data(), count);
    if (!diff.empty()) {
      log.fail(what + ": sendbuff block " + std::to_string(j) + " was modified: " + diff);
      ok = false;
    }
  }
  if (!recv.guardIntact() || !send.guardIntact()) {
    log.fail(what + ": wrote past the end of a buffer");
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

bool checkAllToAllFull(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, largeBlock(job)};
  for (weftDataType_t dt : kAllTypes)
    for (size_t count : counts)
      if (!allToAllCase(job, log, dt, count, 0, 0) || !allToAllCase(job, log, dt, count, 1, 3))
        return false;
  return true;
}

}  // namespace mp
