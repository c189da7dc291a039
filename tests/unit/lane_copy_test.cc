// The ring schedules' data loops (collectives/kernels/lane_copy.h) on the
// host: lanes of a group are simulated one after another (their elements are
// disjoint, so no barrier is needed), and every element of every length,
// lane count and alignment must be copied or combined exactly once, in place
// too, with the vector path and the element path agreeing.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/kernels/lane_copy.h"
#include "collectives/kernels/ring_allreduce_schedule.h"

namespace {

// Lane `index` of a group of `count`, as the loops see a CUDA block's thread.
struct OneLane {
  int i, n;
  int index() const { return i; }
  int count() const { return n; }
  void sync() const {}
};

template <typename T>
T valueAt(size_t i, int salt) {
  return static_cast<T>((i * 2654435761u + static_cast<size_t>(salt)) % 97);
}

template <typename T>
void checkCopy(size_t n, int lanes, size_t dstShift, size_t srcShift) {
  std::vector<T> src(n + 8), dst(n + 8, T{0});
  for (size_t i = 0; i < src.size(); ++i) src[i] = valueAt<T>(i, 1);
  for (int l = 0; l < lanes; ++l)
    weft::dev::copyInto(dst.data() + dstShift, src.data() + srcShift, n, OneLane{l, lanes});
  for (size_t i = 0; i < dst.size(); ++i) {
    const bool inside = i >= dstShift && i < dstShift + n;
    const T want = inside ? src[i - dstShift + srcShift] : T{0};
    ASSERT_EQ(dst[i], want) << "n " << n << " lanes " << lanes << " shifts " << dstShift << "/"
                            << srcShift << " at " << i;
  }
}

template <typename T>
void checkCombine(size_t n, int lanes, size_t shift, bool inPlace) {
  std::vector<T> a(n + 8), b(n + 8), dst(n + 8, T{0});
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = valueAt<T>(i, 2);
    b[i] = valueAt<T>(i, 3);
  }
  const std::vector<T> b0 = b;
  T* out = inPlace ? b.data() + shift : dst.data() + shift;
  for (int l = 0; l < lanes; ++l)
    weft::dev::combineInto<T, weft::dev::OpSum>(out, a.data() + shift, b.data() + shift, n,
                                                OneLane{l, lanes});
  const std::vector<T>& got = inPlace ? b : dst;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool inside = i >= shift && i < shift + n;
    const T want = inside ? static_cast<T>(a[i] + b0[i]) : (inPlace ? b0[i] : T{0});
    ASSERT_EQ(got[i], want) << "n " << n << " lanes " << lanes << " shift " << shift
                            << (inPlace ? " in place" : "") << " at " << i;
  }
}

TEST(LaneCopy, EveryElementOnceForEveryLengthLaneCountAndAlignment) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{15}, size_t{16}, size_t{17},
                   size_t{63}, size_t{64}, size_t{255}, size_t{1000}, size_t{4099}})
    for (int lanes : {1, 3, 32, 512})
      for (size_t shift : {size_t{0}, size_t{1}}) {
        checkCopy<uint8_t>(n, lanes, shift, shift);
        checkCopy<float>(n, lanes, shift, 0);  // one side unaligned: the element path
        checkCopy<double>(n, lanes, shift, shift);
        checkCombine<uint16_t>(n, lanes, shift, false);
        checkCombine<int32_t>(n, lanes, shift, true);
        checkCombine<double>(n, lanes, shift, shift == 1);
      }
}

TEST(LaneCopy, RingChunksStartAlignedAndCoverTheBuffer) {
  for (size_t count : {size_t{1}, size_t{100}, size_t{1031}, size_t{(1 << 20) + 3}})
    for (int n : {2, 3, 8}) {
      const size_t chunk = weft::dev::ringChunk(count, n);
      EXPECT_EQ(chunk % 64, 0u);
      EXPECT_GE(chunk * static_cast<size_t>(n), count) << count << " over " << n;
      EXPECT_LT(chunk * static_cast<size_t>(n - 1), count + 64 * static_cast<size_t>(n));
    }
}

}  // namespace
