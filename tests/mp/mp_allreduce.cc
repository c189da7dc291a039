// Allreduce across processes: float, double, int32 and int64 x sum, prod, min,
// max and avg (and band, bor, bxor for the integers), for counts 0, 1, 7 and a large odd count
// (more than one ring chunk per segment), in and out of place, at vector-misaligned element
// offsets; then one 64 MiB float sum. Every rank checks the whole result
// against a reference it computes from the known inputs of all ranks, checks
// the guard bytes behind the output, and that an out-of-place input is intact.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "mp_common.h"
#include "mp_inputs.h"

namespace mp {
namespace {

constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMin, weftMax,
                                weftAvg, weftBand, weftBor, weftBxor};

template <typename T>
std::string show(T v) {
  return sizeof(T) == 1 ? std::to_string(static_cast<int>(v)) : std::to_string(v);
}

// Compares `got` with `want`; one failure line with the first bad index and a count.
template <typename T>
bool expectEqual(Log& log, const std::string& what, const T* got, const T* want, size_t count) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    if (got[i] == want[i]) continue;
    if (bad++ == 0) first = i;
  }
  if (bad == 0) return true;
  log.fail(what + ": " + std::to_string(bad) + " wrong element(s), first at index " +
           std::to_string(first) + ": got " + show(got[first]) + ", want " + show(want[first]));
  return false;
}

// One allreduce case. Returns false when the call itself failed (the
// communicator may be broken; the caller stops).
template <typename T>
bool runCase(const Job& job, Log& log, weftRedOp_t op, size_t count, const Placement& pl,
             const std::vector<T>& want) {
  const size_t bytes = count * sizeof(T);
  const std::string what = std::string("allreduce ") + Type<T>::kName + " " + opName(op) +
                           " count=" + std::to_string(count) + " " + pl.name();
  Buffer first(bytes, (pl.inPlace ? pl.recvOffset : pl.sendOffset) * sizeof(T));
  std::unique_ptr<Buffer> second;
  if (!pl.inPlace) second = std::make_unique<Buffer>(bytes, pl.recvOffset * sizeof(T));
  T* send = first.as<T>();
  T* recv = pl.inPlace ? send : second->as<T>();
  for (size_t i = 0; i < count; ++i) send[i] = reduceInput<T>(op, job.rank, i);

  weftResult_t r = weftAllReduce(send, recv, count, Type<T>::kDt, op, job.comm, WEFT_STREAM_HOST);
  if (r != weftSuccess) {
    log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
    return false;
  }
  bool ok = expectEqual(log, what, recv, want.data(), count);
  if (!(pl.inPlace ? first : *second).guardIntact()) {
    log.fail(what + ": wrote past the end of recvbuff");
    ok = false;
  }
  if (!pl.inPlace) {
    for (size_t i = 0; i < count && ok; ++i) {
      if (send[i] == reduceInput<T>(op, job.rank, i)) continue;
      log.fail(what + ": sendbuff was modified at index " + std::to_string(i));
      ok = false;
    }
  }
  if (ok) log.pass();
  return true;
}

template <typename T>
bool checkType(const Job& job, Log& log) {
  const size_t counts[] = {0, 1, 7, job.largeCount};
  for (weftRedOp_t op : kOps) {
    if (!std::is_integral<T>::value && (op == weftBand || op == weftBor || op == weftBxor))
      continue;  // the bitwise ops take integers only
    for (size_t count : counts) {
      std::vector<T> want = reduceReference<T>(op, job.nranks, count);
      for (const Placement& pl : kPlacements)
        if (!runCase<T>(job, log, op, count, pl, want)) return false;
    }
  }
  return true;
}

}  // namespace

void checkAllReduce(const Job& job, Log& log) {
  if (!checkType<float>(job, log) || !checkType<double>(job, log) ||
      !checkType<int32_t>(job, log) || !checkType<int64_t>(job, log))
    return;
  const size_t huge = job.hugeBytes / sizeof(float);
  std::vector<float> want = reduceReference<float>(weftSum, job.nranks, huge);
  runCase<float>(job, log, weftSum, huge, Placement{false, 1, 3}, want);
}

}  // namespace mp
