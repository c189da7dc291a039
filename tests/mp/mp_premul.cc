// weftRedOpCreatePreMulSum across processes: allreduce, reduce-scatter and
// reduce with each rank's own scalar (rank + 1, halved for the floats), for
// counts 0, 1, 7 and a large odd count, in and out of place, with the scalar
// read at creation (weftScalarHostImmediate) or when the call runs
// (weftScalarDevice on host memory, changed after the op was made). Inputs
// are small integers, so every expected value is exact. Then the refusals:
// an op used with another datatype, a destroyed op, a bitwise op on floats.
#include <string>
#include <vector>

#include "mp_common.h"
#include "mp_inputs.h"

namespace mp {
namespace {

enum class Kind { kAllReduce, kReduceScatter, kReduce };

template <typename T>
T scalarOf(int rank) {
  return std::is_floating_point<T>::value ? static_cast<T>(0.5 * (rank + 1))
                                          : static_cast<T>(rank + 1);
}

// One case: every rank's input at index i is reduceInput(sum, rank, i).
template <typename T>
bool runCase(const Job& job, Log& log, Kind kind, size_t count, bool inPlace, int root,
             bool atRun) {
  const int n = job.nranks, me = job.rank;
  const size_t inCount = kind == Kind::kReduceScatter ? count * n : count;
  const std::string what =
      std::string("premulsum ") +
      (kind == Kind::kAllReduce       ? "allreduce"
       : kind == Kind::kReduceScatter ? "reduce-scatter"
                                      : "reduce root " + std::to_string(root)) +
      " " + Type<T>::kName + " count=" + std::to_string(count) +
      (inPlace ? " in place" : " out of place") + (atRun ? " (scalar read at run)" : "");
  std::vector<T> in(inCount + 1), out(inCount + 1);
  for (size_t i = 0; i < inCount; ++i) in[i] = reduceInput<T>(weftSum, me, i);
  const std::vector<T> original = in;
  T scalar = atRun ? static_cast<T>(99) : scalarOf<T>(me);
  weftRedOp_t op;
  weftResult_t r = weftRedOpCreatePreMulSum(
      &op, &scalar, Type<T>::kDt, atRun ? weftScalarDevice : weftScalarHostImmediate, job.comm);
  if (r != weftSuccess) {
    log.fail(what + ": create returned " + weftGetLastError(job.comm));
    return false;
  }
  scalar = atRun ? scalarOf<T>(me) : static_cast<T>(99);  // only the run-time read sees this
  T* send = in.data();
  T* recv = inPlace ? (kind == Kind::kReduceScatter ? send + me * count : send) : out.data();
  if (kind == Kind::kAllReduce)
    r = weftAllReduce(send, recv, count, Type<T>::kDt, op, job.comm, WEFT_STREAM_HOST);
  else if (kind == Kind::kReduceScatter)
    r = weftReduceScatter(send, recv, count, Type<T>::kDt, op, job.comm, WEFT_STREAM_HOST);
  else
    r = weftReduce(send, recv, count, Type<T>::kDt, op, root, job.comm, WEFT_STREAM_HOST);
  weftRedOpDestroy(op, job.comm);
  if (r != weftSuccess) {
    log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
    return false;
  }
  const bool hasOut = kind != Kind::kReduce || me == root;
  const size_t first = kind == Kind::kReduceScatter ? me * count : 0;
  bool ok = true;
  for (size_t i = 0; i < count && hasOut && ok; ++i) {
    T want = 0;
    for (int q = 0; q < n; ++q)
      want = static_cast<T>(want + scalarOf<T>(q) * reduceInput<T>(weftSum, q, first + i));
    if (recv[i] == want) continue;
    log.fail(what + ": index " + std::to_string(i) + ": got " + std::to_string(recv[i]) +
             ", want " + std::to_string(want));
    ok = false;
  }
  // The caller's input is never scaled in its place (nor where it is not output).
  for (size_t i = 0; i < inCount && ok; ++i) {
    const bool isOutput = inPlace && hasOut && i >= first && i < first + count;
    if (isOutput || in[i] == original[i]) continue;
    log.fail(what + ": sendbuff changed at index " + std::to_string(i));
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

template <typename T>
bool checkType(const Job& job, Log& log) {
  const size_t large = job.largeCount / job.nranks | 1;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, large})
    for (bool inPlace : {false, true})
      for (bool atRun : {false, true}) {
        if (!runCase<T>(job, log, Kind::kAllReduce, count, inPlace, 0, atRun) ||
            !runCase<T>(job, log, Kind::kReduceScatter, count, inPlace, 0, atRun))
          return false;
        for (int root : {0, job.nranks - 1})
          if (!runCase<T>(job, log, Kind::kReduce, count, inPlace, root, atRun)) return false;
      }
  return true;
}

void expectRefused(Log& log, const Job& job, const std::string& what, weftResult_t r,
                   const char* words) {
  const std::string sentence = weftGetLastError(job.comm);
  if (r == weftInvalidArgument && sentence.find(words) != std::string::npos)
    log.pass();
  else
    log.fail(what + ": returned " + weftGetErrorString(r) + ": " + sentence);
}

void checkRefusals(const Job& job, Log& log) {
  float f[4] = {1, 2, 3, 4};
  int32_t k[4] = {1, 2, 3, 4};
  float half = 0.5f;
  weftRedOp_t op;
  if (weftRedOpCreatePreMulSum(&op, &half, weftFloat32, weftScalarHostImmediate, job.comm) !=
      weftSuccess) {
    log.fail(std::string("create: ") + weftGetLastError(job.comm));
    return;
  }
  expectRefused(log, job, "a float op on int32",
                weftAllReduce(k, k, 4, weftInt32, op, job.comm, WEFT_STREAM_HOST),
                "created for datatype float");
  weftRedOpDestroy(op, job.comm);
  expectRefused(log, job, "a destroyed op",
                weftAllReduce(f, f, 4, weftFloat32, op, job.comm, WEFT_STREAM_HOST),
                "live op of weftRedOpCreatePreMulSum");
  expectRefused(log, job, "weftRedOpDestroy twice", weftRedOpDestroy(op, job.comm),
                "not a live op");
  expectRefused(log, job, "band on float",
                weftAllReduce(f, f, 4, weftFloat32, weftBand, job.comm, WEFT_STREAM_HOST),
                "integer datatypes only");
  expectRefused(log, job, "a bad residence",
                weftRedOpCreatePreMulSum(&op, &half, weftFloat32,
                                         static_cast<weftScalarResidence_t>(7), job.comm),
                "residence=7");
}

}  // namespace

void checkPreMulSum(const Job& job, Log& log) {
  checkRefusals(job, log);
  if (!checkType<float>(job, log) || !checkType<int32_t>(job, log)) return;
  checkType<double>(job, log);
}

}  // namespace mp
