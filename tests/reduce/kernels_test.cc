// Every kernel variant x datatype x op against the independent reference
// (reference.h): odd lengths around every vector and unroll width, pointers
// off by 1 and 3 bytes, dst aliasing a or b, guard bytes around the output,
// inputs left untouched, and the avg division for several rank counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/reduce.h"
#include "inputs.h"
#include "reference.h"
#include "variants.h"

namespace reduce_test {
namespace {

constexpr weftDataType_t kTypes[] = {weftInt8,    weftUint8,   weftInt32,   weftUint32,
                                     weftInt64,   weftUint64,  weftFloat16, weftFloat32,
                                     weftFloat64, weftBfloat16};
constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin,
                                weftAvg, weftBand, weftBor, weftBxor};
constexpr size_t kLengths[] = {0,  1,  2,  3,  5,  7,   8,   9,   15,  16,  17,   31,
                               32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 4099};
constexpr size_t kByteOffsets[] = {0, 1, 3};
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;
constexpr int kRankCounts[] = {1, 2, 3, 7, 200};

enum class Placement { kOutOfPlace, kIntoA, kIntoB };

const char* placementName(Placement p) {
  switch (p) {
    case Placement::kOutOfPlace:
      return "out-of-place";
    case Placement::kIntoA:
      return "dst=a";
    case Placement::kIntoB:
      return "dst=b";
  }
  return "?";
}

// `bytes` of data starting `offset` bytes into an allocation, with guard bytes
// on both sides.
struct Guarded {
  Guarded(const std::vector<uint8_t>& content, size_t offset)
      : offset(offset),
        bytes(content.size()),
        store(content.size() + offset + 2 * kGuard, kGuardByte) {
    if (!content.empty()) std::memcpy(data(), content.data(), content.size());
  }
  uint8_t* data() { return store.data() + kGuard + offset; }
  bool guardsIntact() const {
    for (size_t i = 0; i < kGuard + offset; ++i)
      if (store[i] != kGuardByte) return false;
    for (size_t i = kGuard + offset + bytes; i < store.size(); ++i)
      if (store[i] != kGuardByte) return false;
    return true;
  }
  size_t offset;
  size_t bytes;
  std::vector<uint8_t> store;
};

std::string hex(const uint8_t* p, size_t size) {
  std::string text = "0x";
  char digits[3];
  for (size_t i = size; i-- > 0;) {  // little endian: most significant byte last
    std::snprintf(digits, sizeof(digits), "%02x", p[i]);
    text += digits;
  }
  return text;
}

// Empty when equal, else a sentence naming the first differing element.
std::string firstDifference(weftDataType_t dt, const uint8_t* a, const uint8_t* b,
                            const uint8_t* want, const uint8_t* got, size_t count) {
  const size_t size = elementSize(dt);
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(want + i * size, got + i * size, size) == 0) continue;
    return "element " + std::to_string(i) + ": a=" + hex(a + i * size, size) +
           " b=" + hex(b + i * size, size) + " want " + hex(want + i * size, size) + " got " +
           hex(got + i * size, size);
  }
  return "";
}

class KernelsTest : public ::testing::TestWithParam<std::tuple<size_t, weftDataType_t>> {
 protected:
  void SetUp() override {
    variant_ = &allVariants()[std::get<0>(GetParam())];
    dt_ = std::get<1>(GetParam());
    if (variant_->table == nullptr) GTEST_SKIP() << variant_->name << " is not in this build";
    if (!variant_->runnable) GTEST_SKIP() << "this CPU cannot run " << variant_->name;
  }

  // Runs one combine and checks it; false (with a failure recorded) on error.
  bool checkCombine(weftRedOp_t op, size_t count, size_t offset, Placement placement,
                    uint64_t seed) {
    std::vector<uint8_t> a, b;
    makeInputs(dt_, count, seed, &a, &b);
    std::vector<uint8_t> want(a.size());
    reduce_ref::combine(dt_, op, a.data(), b.data(), want.data(), count);
    Guarded ga(a, offset), gb(b, (offset * 7) % 5), out(std::vector<uint8_t>(a.size(), 0), offset);
    uint8_t* dst = placement == Placement::kIntoA   ? ga.data()
                   : placement == Placement::kIntoB ? gb.data()
                                                    : out.data();
    variant_->table->combine[dt_][op](dst, ga.data(), gb.data(), count);
    const std::string where = variant_->name + " " + weft::datatypeName(dt_) + " " +
                              weft::redOpName(op) + " count=" + std::to_string(count) +
                              " offset=" + std::to_string(offset) + " " + placementName(placement);
    const std::string diff = firstDifference(dt_, a.data(), b.data(), want.data(), dst, count);
    EXPECT_EQ(diff, "") << where;
    EXPECT_TRUE(ga.guardsIntact() && gb.guardsIntact() && out.guardsIntact())
        << where << ": wrote outside the buffers";
    // (count 0: empty vectors may hold no pointer, which memcmp must not get)
    if (placement != Placement::kIntoA && !a.empty()) {
      EXPECT_EQ(std::memcmp(ga.data(), a.data(), a.size()), 0) << where << ": changed a";
    }
    if (placement != Placement::kIntoB && !b.empty()) {
      EXPECT_EQ(std::memcmp(gb.data(), b.data(), b.size()), 0) << where << ": changed b";
    }
    return diff.empty();
  }

  bool checkDivide(size_t count, size_t offset, int nranks, uint64_t seed) {
    std::vector<uint8_t> a, b;
    makeInputs(dt_, count, seed, &a, &b);
    std::vector<uint8_t> want = a;
    reduce_ref::divide(dt_, want.data(), count, nranks);
    Guarded buf(a, offset);
    variant_->table->divide[dt_](buf.data(), count, nranks);
    const std::string where =
        variant_->name + " " + weft::datatypeName(dt_) + " divide count=" + std::to_string(count) +
        " offset=" + std::to_string(offset) + " nranks=" + std::to_string(nranks);
    const std::string diff =
        firstDifference(dt_, a.data(), a.data(), want.data(), buf.data(), count);
    EXPECT_EQ(diff, "") << where;
    EXPECT_TRUE(buf.guardsIntact()) << where << ": wrote outside the buffer";
    return diff.empty();
  }

  const Variant* variant_ = nullptr;
  weftDataType_t dt_ = weftInt8;
};

TEST_P(KernelsTest, CombineMatchesReferenceAtEveryLengthOffsetAndAliasing) {
  uint64_t seed = 1;
  for (weftRedOp_t op : kOps) {
    if (!reduce_ref::applies(dt_, op)) continue;
    for (size_t count : kLengths) {
      for (size_t offset : kByteOffsets) {
        for (Placement p : {Placement::kOutOfPlace, Placement::kIntoA, Placement::kIntoB}) {
          if (!checkCombine(op, count, offset, p, seed++)) return;  // one report is enough
        }
      }
    }
  }
}

TEST_P(KernelsTest, CombineMatchesReferenceOnManyElements) {
  for (weftRedOp_t op : kOps) {
    if (!reduce_ref::applies(dt_, op)) continue;
    if (!checkCombine(op, 1u << 17, 0, Placement::kIntoA, 1000 + op)) return;
  }
}

TEST_P(KernelsTest, AverageDivisionMatchesReference) {
  uint64_t seed = 5000;
  for (int nranks : kRankCounts) {
    for (size_t count : kLengths) {
      for (size_t offset : kByteOffsets) {
        if (!checkDivide(count, offset, nranks, seed++)) return;
      }
    }
  }
}

std::string caseName(const ::testing::TestParamInfo<KernelsTest::ParamType>& info) {
  return allVariants()[std::get<0>(info.param)].name + "_" +
         weft::datatypeName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariants, KernelsTest,
                         ::testing::Combine(::testing::Range<size_t>(0, allVariants().size()),
                                            ::testing::ValuesIn(kTypes)),
                         caseName);

}  // namespace
}  // namespace reduce_test
