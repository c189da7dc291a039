// The data loops of the ring schedules: copy or combine `n` elements, split
// over a lane group (a CUDA block, or one host thread). Written once for the
// GPU and the host, so the CPU tests run these very paths.
//
// Why not a plain element loop: each lane's loads there wait on its own
// earlier stores (the compiler cannot rule out that they alias), so a lane
// has one load in flight at a time and a CTA moves a 64 KiB slot in tens of
// microseconds. Here, where every pointer is 16-byte aligned, each lane moves
// 16-byte vectors and issues four loads before its first store; what the
// vectors leave over (or everything, when a pointer is unaligned) goes
// element by element, still four loads ahead of the stores.
//
// Aliasing: dst may equal a source exactly (in-place combine); every element
// is read and written by the same lane, reads first, so that is safe. Partly
// overlapping ranges are not supported (the schedules never make them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "weft/device/atomics.h"

namespace weft {
namespace dev {

struct alignas(16) Vec16 {
  uint32_t w[4];
};

WEFT_HD Vec16 load16(const void* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *static_cast<const uint4*>(p);  // one 128-bit load
  return Vec16{{v.x, v.y, v.z, v.w}};
#else
  Vec16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

WEFT_HD void store16(void* p, const Vec16& v) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint4*>(p) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

template <typename T, typename Op>
WEFT_HD Vec16 combine16(const Vec16& a, const Vec16& b) {
  constexpr int k = static_cast<int>(sizeof(Vec16) / sizeof(T));
  T x[k], y[k];
  std::memcpy(x, &a, sizeof a);
  std::memcpy(y, &b, sizeof b);
  for (int j = 0; j < k; ++j) x[j] = Op::apply(x[j], y[j]);
  Vec16 r;
  std::memcpy(&r, x, sizeof r);
  return r;
}

WEFT_HD bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// dst[i] = src[i] for i < n.
template <typename T, typename Lanes>
WEFT_HD void copyInto(T* dst, const T* src, size_t n, const Lanes& lanes) {
  static_assert(sizeof(Vec16) % sizeof(T) == 0, "element sizes divide 16");
  const size_t lane = static_cast<size_t>(lanes.index()), step = static_cast<size_t>(lanes.count());
  size_t rest = 0;  // the first element left to the element loop
  if (aligned16(dst) && aligned16(src)) {
    const size_t nv = n * sizeof(T) / sizeof(Vec16);
    auto* d = reinterpret_cast<Vec16*>(dst);
    const auto* s = reinterpret_cast<const Vec16*>(src);
    size_t i = lane;
    for (; i + 3 * step < nv; i += 4 * step) {
      const Vec16 v0 = load16(s + i), v1 = load16(s + i + step), v2 = load16(s + i + 2 * step),
                  v3 = load16(s + i + 3 * step);
      store16(d + i, v0);
      store16(d + i + step, v1);
      store16(d + i + 2 * step, v2);
      store16(d + i + 3 * step, v3);
    }
    for (; i < nv; i += step) store16(d + i, load16(s + i));
    rest = nv * (sizeof(Vec16) / sizeof(T));
  }
  size_t i = rest + lane;
  for (; i + 3 * step < n; i += 4 * step) {
    const T v0 = src[i], v1 = src[i + step], v2 = src[i + 2 * step], v3 = src[i + 3 * step];
    dst[i] = v0;
    dst[i + step] = v1;
    dst[i + 2 * step] = v2;
    dst[i + 3 * step] = v3;
  }
  for (; i < n; i += step) dst[i] = src[i];
}

// dst[i] = Op::apply(a[i], b[i]) for i < n.
template <typename T, typename Op, typename Lanes>
WEFT_HD void combineInto(T* dst, const T* a, const T* b, size_t n, const Lanes& lanes) {
  static_assert(sizeof(Vec16) % sizeof(T) == 0, "element sizes divide 16");
  const size_t lane = static_cast<size_t>(lanes.index()), step = static_cast<size_t>(lanes.count());
  size_t rest = 0;
  if (aligned16(dst) && aligned16(a) && aligned16(b)) {
    const size_t nv = n * sizeof(T) / sizeof(Vec16);
    auto* d = reinterpret_cast<Vec16*>(dst);
    const auto* va = reinterpret_cast<const Vec16*>(a);
    const auto* vb = reinterpret_cast<const Vec16*>(b);
    size_t i = lane;
    for (; i + 3 * step < nv; i += 4 * step) {
      const Vec16 a0 = load16(va + i), a1 = load16(va + i + step), a2 = load16(va + i + 2 * step),
                  a3 = load16(va + i + 3 * step);
      const Vec16 b0 = load16(vb + i), b1 = load16(vb + i + step), b2 = load16(vb + i + 2 * step),
                  b3 = load16(vb + i + 3 * step);
      store16(d + i, combine16<T, Op>(a0, b0));
      store16(d + i + step, combine16<T, Op>(a1, b1));
      store16(d + i + 2 * step, combine16<T, Op>(a2, b2));
      store16(d + i + 3 * step, combine16<T, Op>(a3, b3));
    }
    for (; i < nv; i += step) store16(d + i, combine16<T, Op>(load16(va + i), load16(vb + i)));
    rest = nv * (sizeof(Vec16) / sizeof(T));
  }
  size_t i = rest + lane;
  for (; i + 3 * step < n; i += 4 * step) {
    const T a0 = a[i], a1 = a[i + step], a2 = a[i + 2 * step], a3 = a[i + 3 * step];
    const T b0 = b[i], b1 = b[i + step], b2 = b[i + 2 * step], b3 = b[i + 3 * step];
    dst[i] = Op::apply(a0, b0);
    dst[i + step] = Op::apply(a1, b1);
    dst[i + 2 * step] = Op::apply(a2, b2);
    dst[i + 3 * step] = Op::apply(a3, b3);
  }
  for (; i < n; i += step) dst[i] = Op::apply(a[i], b[i]);
}

}  // namespace dev
}  // namespace weft
