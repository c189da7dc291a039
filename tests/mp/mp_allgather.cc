// Allgather across processes: int8 (odd byte sizes), int32, int64, float and
// double, for counts 0, 1, odd small and a large odd count, in place (the
// piece already at recvbuff + rank*count) and out of place, at misaligned
// element offsets. Every rank checks every rank's slot of the result against
// the known per-rank input formula, and the guard bytes behind recvbuff.
#include <memory>
#include <string>

#include "mp_common.h"
#include "mp_inputs.h"

namespace mp {
namespace {

// One allgather case; false when the call failed (the communicator may be broken).
template <typename T>
bool runCase(const Job& job, Log& log, size_t count, const Placement& pl) {
  const size_t n = static_cast<size_t>(job.nranks);
  const std::string what = std::string("allgather ") + Type<T>::kName +
                           " count=" + std::to_string(count) + " " + pl.name();
  Buffer recvBuf(count * n * sizeof(T), pl.recvOffset * sizeof(T));
  T* recv = recvBuf.as<T>();
  std::unique_ptr<Buffer> sendBuf;
  T* send = recv + static_cast<size_t>(job.rank) * count;
  if (!pl.inPlace) {
    sendBuf = std::make_unique<Buffer>(count * sizeof(T), pl.sendOffset * sizeof(T));
    send = sendBuf->as<T>();
  }
  for (size_t i = 0; i < count; ++i) send[i] = gatherInput<T>(job.rank, i);

  weftResult_t r = weftAllGather(send, recv, count, Type<T>::kDt, job.comm, WEFT_STREAM_HOST);
  if (r != weftSuccess) {
    log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
    return false;
  }
  bool ok = true;
  for (int src = 0; src < job.nranks && ok; ++src) {
    const T* slot = recv + static_cast<size_t>(src) * count;
    for (size_t i = 0; i < count; ++i) {
      if (slot[i] == gatherInput<T>(src, i)) continue;
      log.fail(what + ": slot of rank " + std::to_string(src) + " wrong at index " +
               std::to_string(i));
      ok = false;
      break;
    }
  }
  if (!recvBuf.guardIntact()) {
    log.fail(what + ": wrote past the end of recvbuff");
    ok = false;
  }
  if (ok && sendBuf) {
    for (size_t i = 0; i < count; ++i) {
      if (send[i] == gatherInput<T>(job.rank, i)) continue;
      log.fail(what + ": sendbuff was modified at index " + std::to_string(i));
      ok = false;
      break;
    }
  }
  if (ok) log.pass();
  return true;
}

template <typename T>
bool checkType(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, 1001, job.largeCount};
  for (size_t count : counts)
    for (const Placement& pl : kPlacements)
      if (!runCase<T>(job, log, count, pl)) return false;
  return true;
}

}  // namespace

void checkAllGather(const Job& job, Log& log) {
  (void)(checkType<int8_t>(job, log) && checkType<int32_t>(job, log) &&
         checkType<int64_t>(job, log) && checkType<float>(job, log) && checkType<double>(job, log));
}

}  // namespace mp
