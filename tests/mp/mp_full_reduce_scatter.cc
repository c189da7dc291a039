// Reduce-scatter across processes: every reducible datatype x sum, prod, max,
// min, avg, recvcounts 0, 1, 7 and a large odd block, out of place (at
// misaligned element offsets) and in place (recvbuff = sendbuff +
// rank*recvcount), and with the input overwritten as soon as the call
// returns (peers must be done reading it). Each rank checks its block against the reduction of
// every rank's input formula, the guard bytes, and that an out-of-place input is intact.
#include <cstring>
#include <memory>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {

bool reduceScatterCase(const Job& job, Log& log, weftDataType_t dt, weftRedOp_t op,
                       size_t recvcount, bool inPlace, bool scribble) {
  const size_t es = dtSize(dt), n = static_cast<size_t>(job.nranks);
  const size_t mine = static_cast<size_t>(job.rank) * recvcount;
  const std::string what = std::string("reducescatter ") + dtName(dt) + " " + opName(op) +
                           " recvcount=" + std::to_string(recvcount) +
                           (inPlace ? " in-place(+3)" : " out-of-place(+1,+3)") +
                           (scribble ? " input scribbled on return" : "");
  Buffer send(n * recvcount * es, (inPlace ? 3 : 1) * es);
  fillReduceInput(dt, op, job.rank, 0, n * recvcount, send.data());
  std::unique_ptr<Buffer> recvBuf;
  unsigned char* recv = send.data() + mine * es;
  if (!inPlace) {
    recvBuf = std::make_unique<Buffer>(recvcount * es, 3 * es);
    recv = recvBuf->data();
    fillPattern(recv, recvcount * es, seedOf(7, job.rank));
  }
  weftResult_t r =
      weftReduceScatter(send.data(), recv, recvcount, dt, op, job.comm, WEFT_STREAM_HOST);
  if (scribble) {  // everything but our own block (which holds the result in place)
    std::memset(send.data(), 0x5a, mine * es);
    std::memset(send.data() + (mine + recvcount) * es, 0x5a,
                (n * recvcount - mine - recvcount) * es);
  }
  if (!callOk(job, log, what, r)) return false;

  bool ok = true;
  std::vector<unsigned char> want(recvcount * es + 1);
  fillReduceExpected(dt, op, job.nranks, mine, recvcount, want.data());
  std::string diff = compareElems(dt, recv, want.data(), recvcount);
  if (!diff.empty()) {
    log.fail(what + ": " + diff);
    ok = false;
  }
  if (!(inPlace ? send : *recvBuf).guardIntact()) {
    log.fail(what + ": wrote past the end of recvbuff");
    ok = false;
  }
  if (!inPlace && !scribble) {
    std::vector<unsigned char> input(n * recvcount * es + 1);
    fillReduceInput(dt, op, job.rank, 0, n * recvcount, input.data());
    diff = compareElems(dt, send.data(), input.data(), n * recvcount);
    if (!diff.empty()) {
      log.fail(what + ": sendbuff was modified: " + diff);
      ok = false;
    }
  }
  if (ok) log.pass();
  return true;
}

bool checkReduceScatterFull(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, largeBlock(job)};
  for (weftDataType_t dt : kAllTypes) {
    if (!dtReducible(dt)) continue;
    for (weftRedOp_t op : kAllOps)
      if (opApplies(dt, op))
        for (size_t count : counts)
          for (int form = 0; form < 3; ++form)  // out of place, scribbled, in place + scribbled
            if (!reduceScatterCase(job, log, dt, op, count, form == 2, form > 0)) return false;
  }
  return true;
}

}  // namespace mp
