// Broadcast across processes: all ten datatypes, counts 0, 1, 7 and a large
// odd count, roots 0, a middle rank and nranks-1, each through weftBroadcast
// out of place (non-roots pass sendbuff = NULL), weftBroadcast in place and
// weftBcast. Every rank checks the root's byte pattern and the guard bytes;
// the root overwrites its data as soon as the call returns (and it checked
// it), so a peer still reading it gets garbage.
#include <cstring>
#include <memory>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {
namespace {

const char* formName(BcastForm form) {
  switch (form) {
    case BcastForm::kOutOfPlace:
      return "weftBroadcast out-of-place";
    case BcastForm::kInPlace:
      return "weftBroadcast in-place";
    default:
      return "weftBcast";
  }
}

}  // namespace

bool broadcastCase(const Job& job, Log& log, weftDataType_t dt, size_t count, int root,
                   BcastForm form) {
  const size_t es = dtSize(dt), bytes = count * es;
  const bool isRoot = job.rank == root;
  const std::string what = std::string(formName(form)) + " " + dtName(dt) +
                           " count=" + std::to_string(count) + " root=" + std::to_string(root);
  const uint64_t seed = seedOf(11, static_cast<uint64_t>(root), dt, count);
  Buffer recv(bytes, 3 * es);
  fillPattern(recv.data(), bytes, seedOf(12, job.rank));  // what a non-root had before
  std::unique_ptr<Buffer> send;
  weftResult_t r;
  if (form == BcastForm::kOutOfPlace) {
    if (isRoot) {
      send = std::make_unique<Buffer>(bytes, 1 * es);
      fillPattern(send->data(), bytes, seed);
    }
    r = weftBroadcast(isRoot ? send->data() : nullptr, recv.data(), count, dt, root, job.comm,
                      WEFT_STREAM_HOST);
  } else {
    if (isRoot) fillPattern(recv.data(), bytes, seed);
    r = form == BcastForm::kInPlace
            ? weftBroadcast(recv.data(), recv.data(), count, dt, root, job.comm, WEFT_STREAM_HOST)
            : weftBcast(recv.data(), count, dt, root, job.comm, WEFT_STREAM_HOST);
  }
  // A root's input must not be read after the call returned on the root.
  if (send) std::memset(send->data(), 0x5a, bytes);
  if (!callOk(job, log, what, r)) return false;

  bool ok = true;
  const std::vector<unsigned char> want = pattern(bytes, seed);
  std::string diff = compareElems(dt, recv.data(), want.data(), count);
  if (isRoot) std::memset(recv.data(), 0x5a, bytes);
  if (!diff.empty()) {
    log.fail(what + ": " + diff);
    ok = false;
  }
  if (!recv.guardIntact()) {
    log.fail(what + ": wrote past the end of recvbuff");
    ok = false;
  }
  if (send && !send->guardIntact()) {
    log.fail(what + ": wrote past the end of the root's sendbuff");
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

bool checkBroadcastFull(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, job.largeCount};
  for (weftDataType_t dt : kAllTypes)
    for (size_t count : counts)
      for (int root : testRoots(job.nranks))
        for (BcastForm form : {BcastForm::kOutOfPlace, BcastForm::kInPlace, BcastForm::kBcast})
          if (!broadcastCase(job, log, dt, count, root, form)) return false;
  return true;
}

}  // namespace mp
