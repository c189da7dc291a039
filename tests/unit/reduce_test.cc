// Checks weft::reduceElements and weft::finishAverage for every datatype weft
// reduces and every op, against a scalar reference written here on its own.
// Covers odd lengths (a vectorised loop's tail), dst aliasing an input (the
// in-place form every algorithm uses), element-aligned but vector-misaligned
// pointers, and guard elements around the output to catch overruns.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "collectives/reduce.h"

namespace {

template <typename T>
struct Dt;
template <>
struct Dt<int8_t> {
  static constexpr weftDataType_t kType = weftInt8;
};
template <>
struct Dt<uint8_t> {
  static constexpr weftDataType_t kType = weftUint8;
};
template <>
struct Dt<int32_t> {
  static constexpr weftDataType_t kType = weftInt32;
};
template <>
struct Dt<uint32_t> {
  static constexpr weftDataType_t kType = weftUint32;
};
template <>
struct Dt<int64_t> {
  static constexpr weftDataType_t kType = weftInt64;
};
template <>
struct Dt<uint64_t> {
  static constexpr weftDataType_t kType = weftUint64;
};
template <>
struct Dt<float> {
  static constexpr weftDataType_t kType = weftFloat32;
};
template <>
struct Dt<double> {
  static constexpr weftDataType_t kType = weftFloat64;
};

constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
constexpr size_t kLengths[] = {0, 1, 7, 1023, 4099};
constexpr size_t kOffsets[] = {0, 1, 3};  // elements: natural alignment, odd vector alignment
constexpr size_t kGuard = 4;              // untouched elements on each side of the output

// Input `which` (0, 1 or 2) at index i. Small magnitudes: no signed sum or product
// of three inputs overflows; floats are not exact in binary (x * 0.1).
template <typename T>
T inputValue(int which, size_t i) {
  int v = static_cast<int>((i * 7 + static_cast<size_t>(which) * 13 + i / 5) % 11) - 5;
  if (std::is_unsigned<T>::value) v += 5;
  if (std::is_floating_point<T>::value) return static_cast<T>(v) * static_cast<T>(0.1);
  return static_cast<T>(v);
}

template <typename T>
T refCombine(weftRedOp_t op, T a, T b) {
  switch (op) {
    case weftProd:
      return static_cast<T>(a * b);
    case weftMax:
      return a < b ? b : a;
    case weftMin:
      return b < a ? b : a;
    default:  // weftSum, weftAvg
      return static_cast<T>(a + b);
  }
}

template <typename T>
T sentinel() {
  return static_cast<T>(0x5A);
}

// A buffer with kGuard sentinel elements before and after `len` elements that
// start `offset` elements past an aligned allocation.
template <typename T>
struct Guarded {
  Guarded(size_t len, size_t offset) : len(len), store(len + offset + 2 * kGuard + 8) {
    for (T& x : store) x = sentinel<T>();
    data = store.data() + offset + kGuard;
  }
  bool guardsIntact() const {
    for (size_t g = 1; g <= kGuard; ++g)
      if (data[-static_cast<ptrdiff_t>(g)] != sentinel<T>() || data[len + g - 1] != sentinel<T>())
        return false;
    return true;
  }
  size_t len;
  std::vector<T> store;
  T* data;
};

template <typename T>
class ReduceTest : public ::testing::Test {};

using ReducibleTypes =
    ::testing::Types<int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(ReduceTest, ReducibleTypes);

// Expected result of combining the three inputs (then dividing by 3 for avg).
template <typename T>
std::vector<T> expected(weftRedOp_t op, size_t len) {
  std::vector<T> out(len);
  for (size_t i = 0; i < len; ++i) {
    T v = refCombine(op, refCombine(op, inputValue<T>(0, i), inputValue<T>(1, i)),
                     inputValue<T>(2, i));
    if (op == weftAvg) v = static_cast<T>(v / static_cast<T>(3));
    out[i] = v;
  }
  return out;
}

template <typename T>
std::string where(weftRedOp_t op, size_t len, size_t off, size_t i) {
  return std::string(weft::datatypeName(Dt<T>::kType)) + " " + weft::redOpName(op) +
         " len=" + std::to_string(len) + " offset=" + std::to_string(off) +
         " i=" + std::to_string(i);
}

template <typename T>
void fill(Guarded<T>& g, int which) {
  for (size_t i = 0; i < g.len; ++i) g.data[i] = inputValue<T>(which, i);
}

TYPED_TEST(ReduceTest, OutOfPlaceThenInPlaceMatchesReference) {
  using T = TypeParam;
  const weftDataType_t dt = Dt<T>::kType;
  ASSERT_TRUE(weft::datatypeReducible(dt));
  ASSERT_EQ(weft::datatypeSize(dt), sizeof(T));
  for (weftRedOp_t op : kOps) {
    for (size_t len : kLengths) {
      for (size_t off : kOffsets) {
        Guarded<T> a(len, off), b(len, off + 1), c(len, (off + 2) % 4), dst(len, off);
        fill(a, 0);
        fill(b, 1);
        fill(c, 2);
        // dst = a op b (three distinct buffers), then dst = dst op c (dst aliases a).
        weft::reduceElements(dt, op, dst.data, a.data, b.data, len);
        weft::reduceElements(dt, op, dst.data, dst.data, c.data, len);
        if (op == weftAvg) weft::finishAverage(dt, dst.data, len, 3);
        std::vector<T> want = expected<T>(op, len);
        for (size_t i = 0; i < len; ++i)
          ASSERT_EQ(dst.data[i], want[i]) << where<T>(op, len, off, i);
        ASSERT_TRUE(dst.guardsIntact())
            << "wrote outside the output: " << where<T>(op, len, off, 0);
        for (size_t i = 0; i < len; ++i) {
          ASSERT_EQ(a.data[i], inputValue<T>(0, i))
              << "input a changed: " << where<T>(op, len, off, i);
          ASSERT_EQ(b.data[i], inputValue<T>(1, i))
              << "input b changed: " << where<T>(op, len, off, i);
        }
      }
    }
  }
}

TYPED_TEST(ReduceTest, DstAliasingSecondInput) {
  using T = TypeParam;
  const weftDataType_t dt = Dt<T>::kType;
  for (weftRedOp_t op : kOps) {
    for (size_t len : kLengths) {
      for (size_t off : kOffsets) {
        Guarded<T> a(len, off), b(len, off + 2), c(len, off);
        fill(a, 0);
        fill(b, 1);
        fill(c, 2);
        // b = a op b; b = c op b: the result lands in the second operand.
        weft::reduceElements(dt, op, b.data, a.data, b.data, len);
        weft::reduceElements(dt, op, b.data, c.data, b.data, len);
        if (op == weftAvg) weft::finishAverage(dt, b.data, len, 3);
        for (size_t i = 0; i < len; ++i) {
          T want = refCombine(op, inputValue<T>(2, i),
                              refCombine(op, inputValue<T>(0, i), inputValue<T>(1, i)));
          if (op == weftAvg) want = static_cast<T>(want / static_cast<T>(3));
          ASSERT_EQ(b.data[i], want) << where<T>(op, len, off, i);
        }
        ASSERT_TRUE(b.guardsIntact()) << where<T>(op, len, off, 0);
      }
    }
  }
}

TYPED_TEST(ReduceTest, AverageOfOneRankIsIdentity) {
  using T = TypeParam;
  Guarded<T> g(1023, 1);
  fill(g, 1);
  weft::finishAverage(Dt<T>::kType, g.data, g.len, 1);
  for (size_t i = 0; i < g.len; ++i) ASSERT_EQ(g.data[i], inputValue<T>(1, i)) << i;
  ASSERT_TRUE(g.guardsIntact());
}

TEST(ReduceSemantics, SignedAverageTruncatesTowardZero) {
  int32_t v32[] = {-7, 7, -1, 5};
  weft::finishAverage(weftInt32, v32, 4, 2);
  EXPECT_EQ(v32[0], -3);
  EXPECT_EQ(v32[1], 3);
  EXPECT_EQ(v32[2], 0);
  EXPECT_EQ(v32[3], 2);
  int8_t v8[] = {-7, 100};
  weft::finishAverage(weftInt8, v8, 2, 3);
  EXPECT_EQ(v8[0], -2);
  EXPECT_EQ(v8[1], 33);
}

TEST(ReduceSemantics, UnsignedSumWrapsAround) {
  uint8_t a8[] = {200, 255}, b8[] = {100, 1}, d8[2];
  weft::reduceElements(weftUint8, weftSum, d8, a8, b8, 2);
  EXPECT_EQ(d8[0], 44);
  EXPECT_EQ(d8[1], 0);
  uint64_t a64 = std::numeric_limits<uint64_t>::max(), b64 = 2, d64 = 0;
  weft::reduceElements(weftUint64, weftSum, &d64, &a64, &b64, 1);
  EXPECT_EQ(d64, 1u);
}

TEST(ReduceSemantics, ExtremesOfMaxAndMin) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max(), d;
  weft::reduceElements(weftInt64, weftMax, &d, &lo, &hi, 1);
  EXPECT_EQ(d, hi);
  weft::reduceElements(weftInt64, weftMin, &d, &hi, &lo, 1);
  EXPECT_EQ(d, lo);
  double inf = std::numeric_limits<double>::infinity(), m = -inf, x;
  weft::reduceElements(weftFloat64, weftMax, &x, &m, &inf, 1);
  EXPECT_EQ(x, inf);
  weft::reduceElements(weftFloat64, weftMin, &x, &inf, &m, 1);
  EXPECT_EQ(x, m);
}

// Average over more ranks than a narrow type can represent: the divisor must not
// be converted to the element type (int8(200) is negative, uint8(256) is zero).
TEST(ReduceSemantics, AverageOverManyRanksInNarrowTypes) {
  int8_t s8[] = {100, -100, 0};
  weft::finishAverage(weftInt8, s8, 3, 200);
  EXPECT_EQ(s8[0], 0) << "100 / 200 ranks";
  EXPECT_EQ(s8[1], 0) << "-100 / 200 ranks";
  EXPECT_EQ(s8[2], 0);
  uint8_t u8[] = {255, 0};
  weft::finishAverage(weftUint8, u8, 2, 256);  // must not divide by uint8(256) == 0
  EXPECT_EQ(u8[0], 0);
  EXPECT_EQ(u8[1], 0);
  uint8_t w8[] = {250};
  weft::finishAverage(weftUint8, w8, 1, 125);
  EXPECT_EQ(w8[0], 2);
}

TEST(ReduceMetadata, SizesNamesAndReducibility) {
  EXPECT_EQ(weft::datatypeSize(weftInt8), 1u);
  EXPECT_EQ(weft::datatypeSize(weftFloat16), 2u);
  EXPECT_EQ(weft::datatypeSize(weftBfloat16), 2u);
  EXPECT_EQ(weft::datatypeSize(weftUint32), 4u);
  EXPECT_EQ(weft::datatypeSize(weftFloat64), 8u);
  EXPECT_EQ(weft::datatypeSize(weftNumTypes), 0u);
  EXPECT_EQ(weft::datatypeSize(static_cast<weftDataType_t>(15)), 0u);
  EXPECT_FALSE(weft::datatypeReducible(weftNumTypes));
  EXPECT_STREQ(weft::datatypeName(weftUint64), "uint64");
  EXPECT_STREQ(weft::redOpName(weftAvg), "avg");
  EXPECT_STREQ(weft::redOpName(static_cast<weftRedOp_t>(weftNumOps + 1)), "unknown");
}

TEST(ReduceBitwise, IntegersOnly) {
  int32_t a[] = {0x0ff0, -1, 6}, b[] = {0x00ff, 5, 3}, d[3];
  weft::reduceElements(weftInt32, weftBand, d, a, b, 3);
  EXPECT_EQ(d[0], 0x00f0);
  EXPECT_EQ(d[1], 5);
  EXPECT_EQ(d[2], 2);
  weft::reduceElements(weftInt32, weftBor, d, a, b, 3);
  EXPECT_EQ(d[0], 0x0fff);
  EXPECT_EQ(d[1], -1);
  weft::reduceElements(weftInt32, weftBxor, d, a, b, 3);
  EXPECT_EQ(d[0], 0x0f0f);
  EXPECT_EQ(d[1], -6);
  // No float kernel: the call leaves the output alone (validation refuses it first).
  float x[] = {1.0f}, y[] = {2.0f}, z[] = {7.0f};
  weft::reduceElements(weftFloat32, weftBand, z, x, y, 1);
  EXPECT_EQ(z[0], 7.0f);
  EXPECT_TRUE(weft::redOpApplies(weftUint8, weftBxor));
  EXPECT_FALSE(weft::redOpApplies(weftBfloat16, weftBor));
  EXPECT_TRUE(weft::redOpApplies(weftFloat64, weftMax));
  EXPECT_STREQ(weft::redOpName(weftBxor), "bxor");
}

TEST(ScaleElements, ProductArithmeticAtEveryLength) {
  for (size_t n : {0u, 1u, 7u, 1025u, 5000u}) {  // across the 4 KiB run of scalars
    std::vector<int8_t> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<int8_t>(i * 37);
    const int8_t s = -3;
    weft::scaleElements(weftInt8, out.data(), in.data(), n, &s);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], static_cast<int8_t>(static_cast<uint8_t>(in[i]) * 253u)) << i;
  }
  std::vector<double> v{1.5, -2.0, 0.25};
  const double k = 0.5;
  weft::scaleElements(weftFloat64, v.data(), v.data(), v.size(), &k);  // in place
  EXPECT_EQ(v, (std::vector<double>{0.75, -1.0, 0.125}));
  const uint16_t half3 = 0x4200, halfHalf = 0x3800;  // 3.0 and 0.5 in binary16
  uint16_t h = half3;
  weft::scaleElements(weftFloat16, &h, &h, 1, &halfHalf);
  EXPECT_EQ(h, 0x3E00);  // 1.5
}

}  // namespace
