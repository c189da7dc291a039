// Bitwise reproducibility across ranks: with fractional float/double inputs the
// sums round, so the result depends on the order in which a schedule adds the
// ranks' contributions. Every rank must still hold bitwise the same result (a
// training job whose replicas drift apart diverges). Each rank hashes its
// result, the hashes are allgathered and compared; the result must also be
// close to a reference, and the same in place as out of place.
#include <cmath>
#include <string>
#include <vector>

#include "mp_common.h"
#include "mp_inputs.h"

namespace mp {
namespace {

template <typename T>
bool reduceAndHash(const Job& job, Log& log, const std::string& what, weftRedOp_t op, size_t count,
                   bool inPlace, uint64_t* hash) {
  std::vector<T> in(count), out(count);
  for (size_t i = 0; i < count; ++i) in[i] = fractionalInput<T>(job.rank, i);
  T* recv = inPlace ? in.data() : out.data();
  weftResult_t r =
      weftAllReduce(in.data(), recv, count, Type<T>::kDt, op, job.comm, WEFT_STREAM_HOST);
  if (r != weftSuccess) {
    log.fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(job.comm));
    return false;
  }
  // Close to the exact value (computed in long double, in rank order).
  const long double tol = sizeof(T) == 4 ? 1e-4L : 1e-12L;
  for (size_t i = 0; i < count; ++i) {
    long double exact = 0;
    for (int k = 0; k < job.nranks; ++k)
      exact += static_cast<long double>(fractionalInput<T>(k, i));
    if (op == weftAvg) exact /= job.nranks;
    if (std::fabs(static_cast<long double>(recv[i]) - exact) > tol * (1 + std::fabs(exact))) {
      log.fail(what + ": index " + std::to_string(i) + " is " + std::to_string(recv[i]) +
               ", expected about " + std::to_string(static_cast<double>(exact)));
      break;
    }
  }
  *hash = hashBytes(recv, count * sizeof(T));
  return true;
}

template <typename T>
bool checkType(const Job& job, Log& log) {
  for (weftRedOp_t op : {weftSum, weftAvg}) {
    for (size_t count : {size_t{7}, size_t{4097}, job.largeCount}) {
      const std::string what = std::string("determinism ") + Type<T>::kName + " " + opName(op) +
                               " count=" + std::to_string(count);
      uint64_t outOfPlace = 0, inPlace = 0;
      if (!reduceAndHash<T>(job, log, what + " out-of-place", op, count, false, &outOfPlace) ||
          !reduceAndHash<T>(job, log, what + " in-place", op, count, true, &inPlace))
        return false;
      bool ok = true;
      if (inPlace != outOfPlace) {
        log.fail(what + ": in-place result differs bitwise from out-of-place");
        ok = false;
      }
      std::vector<uint64_t> all(static_cast<size_t>(job.nranks));
      weftResult_t r =
          weftAllGather(&outOfPlace, all.data(), 1, weftUint64, job.comm, WEFT_STREAM_HOST);
      if (r != weftSuccess) {
        log.fail(what + ": allgather of hashes returned " + weftGetErrorString(r));
        return false;
      }
      for (int k = 0; k < job.nranks; ++k) {
        if (all[static_cast<size_t>(k)] == outOfPlace) continue;
        log.fail(what + ": rank " + std::to_string(k) +
                 "'s result differs bitwise from this rank's");
        ok = false;
      }
      if (ok) log.pass();
    }
  }
  return true;
}

}  // namespace

void checkDeterminism(const Job& job, Log& log) {
  if (checkType<float>(job, log)) checkType<double>(job, log);
}

}  // namespace mp
