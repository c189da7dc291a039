// One-round shared-memory collectives (see local_board.h).
#include "collectives/local_board.h"

#include <cstring>

#include "base/error.h"
#include "collectives/reduce.h"

namespace weft {

weftResult_t LocalBoard::allReduce(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  // Everyone combines the published inputs in rank order: bitwise equal results.
  char* out = static_cast<char*>(a.recvbuff);
  if (nranks_ == 1) {
    if (out != a.sendbuff) std::memcpy(out, a.sendbuff, bytes);
  } else {
    reduceInRankOrder(a.datatype, a.op, out, nranks_, a.count,
                      [&](int p) { return slotOf(p, slot); });
  }
  if (a.op == weftAvg) finishAverage(a.datatype, out, a.count, nranks_);
  return weftSuccess;
}

weftResult_t LocalBoard::allGather(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  char* out = static_cast<char*>(a.recvbuff);
  for (int p = 0; p < nranks_; ++p) {
    const void* src = p == rank_ ? a.sendbuff : slotOf(p, slot);
    if (out + p * bytes != src) std::memmove(out + p * bytes, src, bytes);
  }
  return weftSuccess;
}

weftResult_t LocalBoard::broadcast(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  const bool root = rank_ == a.root;
  int slot = 0;
  WEFT_CHECK(publishAndWait(root ? a.sendbuff : nullptr, root ? bytes : 0, run, &slot));
  const void* src = root ? a.sendbuff : slotOf(a.root, slot);
  if (a.recvbuff != src) std::memcpy(a.recvbuff, src, bytes);
  return weftSuccess;
}

weftResult_t LocalBoard::reduce(const CollArgs& a, const FlowRunOptions& run) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  int slot = 0;
  WEFT_CHECK(publishAndWait(a.sendbuff, bytes, run, &slot));
  if (rank_ != a.root) return weftSuccess;
  char* out = static_cast<char*>(a.recvbuff);
  if (nranks_ == 1) {
    if (out != a.sendbuff) std::memcpy(out, a.sendbuff, bytes);
  } else {
    reduceInRankOrder(a.datatype, a.op, out, nranks_, a.count,
                      [&](int p) { return slotOf(p, slot); });
  }
  if (a.op == weftAvg) finishAverage(a.datatype, out, a.count, nranks_);
  return weftSuccess;
}

weftResult_t LocalBoard::barrier(const FlowRunOptions& run) {
  int slot = 0;
  return publishAndWait(nullptr, 0, run, &slot);
}

}  // namespace weft
