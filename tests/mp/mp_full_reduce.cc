// Reduce across processes: every reducible datatype x sum, prod, max, min,
// avg, counts 0, 1, 7 and a large odd count, roots 0, a middle rank and
// nranks-1, out of place (misaligned; non-roots pass recvbuff = NULL when the
// root is the last rank) and in place. The root checks the reduction of every
// rank's input formula and the guard bytes; every rank checks that its input
// and, off the root, its recvbuff were left alone.
#include <memory>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {

bool reduceCase(const Job& job, Log& log, weftDataType_t dt, weftRedOp_t op, size_t count, int root,
                bool inPlace, const void* expected) {
  const size_t es = dtSize(dt), bytes = count * es;
  const bool isRoot = job.rank == root;
  const std::string what = std::string("reduce ") + dtName(dt) + " " + opName(op) +
                           " count=" + std::to_string(count) + " root=" + std::to_string(root) +
                           (inPlace ? " in-place(+3)" : " out-of-place(+1,+3)");
  Buffer send(bytes, (inPlace ? 3 : 1) * es);
  fillReduceInput(dt, op, job.rank, 0, count, send.data());
  std::unique_ptr<Buffer> recvBuf;
  void* recv = send.data();
  const uint64_t before = seedOf(13, job.rank);
  if (!inPlace) {
    recvBuf = std::make_unique<Buffer>(bytes, 3 * es);
    fillPattern(recvBuf->data(), bytes, before);
    recv = !isRoot && root == job.nranks - 1 ? nullptr : recvBuf->data();
  }
  weftResult_t r = weftReduce(send.data(), recv, count, dt, op, root, job.comm, WEFT_STREAM_HOST);
  if (!callOk(job, log, what, r)) return false;

  bool ok = true;
  std::vector<unsigned char> input(bytes + 1);
  fillReduceInput(dt, op, job.rank, 0, count, input.data());
  if (isRoot) {
    std::vector<unsigned char> computed;
    if (expected == nullptr) {
      computed.resize(bytes + 1);
      fillReduceExpected(dt, op, job.nranks, 0, count, computed.data());
      expected = computed.data();
    }
    std::string diff = compareElems(dt, recv, expected, count);
    if (!diff.empty()) {
      log.fail(what + ": " + diff);
      ok = false;
    }
  } else if (inPlace || recv != nullptr) {
    const std::vector<unsigned char> untouched = inPlace ? input : pattern(bytes, before);
    std::string diff = compareElems(dt, recv, untouched.data(), count);
    if (!diff.empty()) {
      log.fail(what + ": a non-root's recvbuff was written: " + diff);
      ok = false;
    }
  }
  if (!send.guardIntact() || (recvBuf && !recvBuf->guardIntact())) {
    log.fail(what + ": wrote past the end of a buffer");
    ok = false;
  }
  if (!inPlace) {
    std::string diff = compareElems(dt, send.data(), input.data(), count);
    if (!diff.empty()) {
      log.fail(what + ": sendbuff was modified: " + diff);
      ok = false;
    }
  }
  if (ok) log.pass();
  return true;
}

bool checkReduceFull(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, job.largeCount};
  for (weftDataType_t dt : kAllTypes) {
    if (!dtReducible(dt)) continue;
    for (weftRedOp_t op : kAllOps) {
      if (!opApplies(dt, op)) continue;
      for (size_t count : counts) {
        std::vector<unsigned char> want(count * dtSize(dt) + 1);
        fillReduceExpected(dt, op, job.nranks, 0, count, want.data());
        for (int root : testRoots(job.nranks))
          for (bool inPlace : {false, true})
            if (!reduceCase(job, log, dt, op, count, root, inPlace, want.data())) return false;
      }
    }
  }
  return true;
}

}  // namespace mp
