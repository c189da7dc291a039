// Check data and comparison for the perf tools (see perf_check.h).
#include "perf_check.h"

#include <algorithm>
#include <vector>

#include "perf_collective.h"
#include "perf_datatype.h"

namespace {

// Inputs repeat with this period (a prime, so patterns do not line up with
// power-of-two chunk boundaries), which lets expected values be tabulated.
constexpr size_t kPeriod = 1031;

// Table of PerfReducedValue for one (op, nranks), rebuilt when either changes.
struct ReducedTable {
  weftRedOp_t op = weftNumOps;
  int nranks = 0;
  std::vector<int64_t> values;
};

int64_t Reduce(weftRedOp_t op, int64_t a, int64_t b) {
  switch (op) {
    case weftProd:
      return a * b;
    case weftMax:
      return std::max(a, b);
    case weftMin:
      return std::min(a, b);
    case weftBand:
      return a & b;
    case weftBor:
      return a | b;
    case weftBxor:
      return a ^ b;
    default:
      return a + b;
  }
}

const std::vector<int64_t>& TableFor(weftRedOp_t op, int nranks) {
  // Per thread: with -t or -g, several ranks of one process check at once.
  thread_local ReducedTable table;
  if (table.op != op || table.nranks != nranks) {
    table.op = op;
    table.nranks = nranks;
    table.values.assign(kPeriod, 0);
    for (size_t j = 0; j < kPeriod; ++j) {
      int64_t value = PerfInputValue(op, 0, j);
      for (int r = 1; r < nranks; ++r) value = Reduce(op, value, PerfInputValue(op, r, j));
      if (op == weftAvg) value /= nranks;  // exact: every rank contributes the same value
      table.values[j] = value;
    }
  }
  return table.values;
}

}  // namespace

int64_t PerfInputValue(weftRedOp_t op, int rank, size_t index) {
  const int64_t j = static_cast<int64_t>(index % kPeriod);
  const int64_t r = rank;
  switch (op) {
    case weftProd:
      return (r + j) % 13 == 0 ? 2 : 1;  // at most ceil(n/13) twos per element
    case weftMax:
    case weftMin:
      return (r * 37 + j * 11) % 127;  // fits int8
    case weftAvg:
      return (j * 3) % 11;  // same on every rank, so the average is exact
    case weftBand:          // each rank clears one of 7 bits
      return 0x7f & ~(int64_t{1} << ((r + j) % 7));
    case weftBor:  // each rank sets one
      return int64_t{1} << ((r * 3 + j) % 7);
    case weftBxor:
      return (r * 7 + j * 3) % 128;
    default:
      return (r * 7 + j * 3) % 11;  // sums stay exact and small
  }
}

int64_t PerfReducedValue(weftRedOp_t op, int nranks, size_t index) {
  return TableFor(op, nranks)[index % kPeriod];
}

void PerfFillInput(void* buf, size_t count, weftDataType_t type, weftRedOp_t op, int rank) {
  PerfVisitType(type, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(buf);
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(PerfInputValue(op, rank, i));
  });
}

void PerfFillTiming(void* buf, size_t count, weftDataType_t type, int rank) {
  constexpr uint64_t kPrime = 65521;  // largest prime below 2^16
  PerfVisitType(type, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(buf);
    uint64_t j = static_cast<uint64_t>(rank) * 7919 % kPrime;
    for (size_t i = 0; i < count; ++i) {
      // j * 40503 mod p walks a permutation of [0, p): consecutive values look
      // random, so any 4 KiB of them differ from every other 4 KiB.
      out[i] = static_cast<T>(static_cast<int64_t>(1 + j * 40503 % kPrime % 100));
      j = j + 1 == kPrime ? 0 : j + 1;
    }
  });
}

void PerfFillConstant(void* buf, size_t count, weftDataType_t type, int64_t value) {
  PerfVisitType(type, [&](auto zero) {
    using T = decltype(zero);
    std::fill(static_cast<T*>(buf), static_cast<T*>(buf) + count, static_cast<T>(value));
  });
}

int64_t PerfCountWrong(const PerfCollective& collective, const PerfCall& call) {
  const size_t elems = collective.recv_elems(call.count, call.nranks);
  int64_t wrong = 0;
  bool known = PerfVisitType(call.type, [&](auto zero) {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(call.recv);
    for (size_t i = 0; i < elems; ++i) {
      const T want = static_cast<T>(collective.expected(i, call));
      if (!(in[i] == want)) ++wrong;
    }
  });
  return known ? wrong : static_cast<int64_t>(elems);
}
