// The known per-rank inputs of the multi-process checks and the reference
// results each rank computes from them on its own (no communication). Inputs
// are small integers, so every sum, product, min and max is exact in every
// type and the result does not depend on the order a schedule combines ranks.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace mp {

// Rank r's allreduce input at index i for op `op`.
template <typename T>
T reduceInput(weftRedOp_t op, int r, size_t i) {
  const size_t ur = static_cast<size_t>(r);
  switch (op) {
    case weftProd: {
      static const int kFactors[] = {1, -1, 2, 1, -2, 1, 1};
      return static_cast<T>(kFactors[(i + 3 * ur) % 7]);  // |product| <= 2^nranks
    }
    case weftMax:
    case weftMin:
      return static_cast<T>(static_cast<int>((i * 31 + ur * 17) % 201) - 100);
    case weftBand:  // each rank clears one bit of 0x7f: the and keeps the others
      return static_cast<T>(0x7f & ~(1 << ((i + 2 * ur) % 7)));
    case weftBor:  // each rank sets one bit
      return static_cast<T>(1 << ((i * 3 + ur) % 7));
    case weftBxor:  // signed inputs mix negative values in
      return static_cast<T>(static_cast<int>((i * 7 + ur * 13) % 128) -
                            (std::is_signed<T>::value ? 64 : 0));
    default:  // sum, avg: |sum| <= 20 * nranks
      return static_cast<T>(static_cast<int>((i * 7 + ur * 13) % 41) - 20);
  }
}

template <typename T>
T combine(weftRedOp_t op, T a, T b) {
  switch (op) {
    case weftProd:
      return static_cast<T>(a * b);
    case weftMax:
      return a > b ? a : b;
    case weftMin:
      return a < b ? a : b;
    case weftBand:
    case weftBor:
    case weftBxor:
      if constexpr (std::is_integral<T>::value)
        return static_cast<T>(op == weftBand ? a & b : op == weftBor ? a | b : a ^ b);
      return a;  // integers only
    default:
      return static_cast<T>(a + b);
  }
}

// The allreduce result over `nranks` ranks, element by element.
template <typename T>
std::vector<T> reduceReference(weftRedOp_t op, int nranks, size_t count) {
  std::vector<T> out(count);
  for (size_t i = 0; i < count; ++i) {
    T acc = reduceInput<T>(op, 0, i);
    for (int r = 1; r < nranks; ++r) acc = combine(op, acc, reduceInput<T>(op, r, i));
    if (op == weftAvg) acc = static_cast<T>(acc / static_cast<T>(nranks));
    out[i] = acc;
  }
  return out;
}

// Rank r's allgather piece at index i: distinct across ranks and indices
// (modulo the type's range for int8), exact in float.
template <typename T>
T gatherInput(int r, size_t i) {
  uint64_t v = static_cast<uint64_t>(r) * 1000003u + i;
  if (sizeof(T) == 1) return static_cast<T>(static_cast<int>((v * 7) % 251) - 125);
  return static_cast<T>(v % 16777216u);
}

// Fractional inputs for the determinism check: sums of these round, so the
// result depends on the order of additions, which must be the same on every rank.
template <typename T>
T fractionalInput(int r, size_t i) {
  uint64_t h =
      (static_cast<uint64_t>(i) * 2654435761u + static_cast<uint64_t>(r) * 40503u) % 100003u;
  T v = static_cast<T>(h) / static_cast<T>(997.0);
  return (r + i) % 3 == 0 ? -v : v;
}

}  // namespace mp
