// The run-time choice of variant: every name WEFT_REDUCE_ISA accepts, bad
// names, and names this CPU cannot run (which fall back to the widest variant
// it can), each in a fresh process because the choice is made once; and the
// public entry points (reduce.h) through the chosen variant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "collectives/reduce.h"
#include "collectives/reduce_isa.h"

namespace reduce_test {
namespace {

using weft::ReduceIsa;

ReduceIsa widest() {
  if (weft::reduceIsaSupported(ReduceIsa::kAvx512)) return ReduceIsa::kAvx512;
  if (weft::reduceIsaSupported(ReduceIsa::kAvx2)) return ReduceIsa::kAvx2;
  return ReduceIsa::kScalar;
}

// In a child process: sets WEFT_REDUCE_ISA (unset when value is null) and
// exits 0 when the variant chosen is `want`.
void expectChoice(const char* value, ReduceIsa want) {
  EXPECT_EXIT(
      {
        if (value == nullptr) {
          unsetenv("WEFT_REDUCE_ISA");
        } else {
          setenv("WEFT_REDUCE_ISA", value, 1);
        }
        std::exit(weft::reduceIsaActive() == want ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "WEFT_REDUCE_ISA=" << (value ? value : "(unset)") << " should pick "
      << weft::reduceIsaName(want);
}

class Dispatch : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(Dispatch, AutoAndUnsetPickTheWidestSupported) {
  expectChoice(nullptr, widest());
  expectChoice("auto", widest());
  expectChoice("", widest());
}

TEST_F(Dispatch, ScalarCanAlwaysBeForced) {
  expectChoice("scalar", ReduceIsa::kScalar);
  expectChoice("SCALAR", ReduceIsa::kScalar);
}

TEST_F(Dispatch, VectorIsasAreForcedWhereSupportedElseFallBack) {
  for (ReduceIsa isa : {ReduceIsa::kAvx2, ReduceIsa::kAvx512}) {
    expectChoice(weft::reduceIsaName(isa), weft::reduceIsaSupported(isa) ? isa : widest());
  }
}

TEST_F(Dispatch, UnknownNamesFallBackToTheWidest) { expectChoice("sse9", widest()); }

TEST(ReduceApi, EveryDatatypeIsReducible) {
  for (int dt = 0; dt < weftNumTypes; ++dt)
    EXPECT_TRUE(weft::datatypeReducible(static_cast<weftDataType_t>(dt))) << dt;
  EXPECT_FALSE(weft::datatypeReducible(weftNumTypes));
  EXPECT_FALSE(weft::datatypeReducible(static_cast<weftDataType_t>(-1)));
}

TEST(ReduceApi, ScalarIsAlwaysSupported) {
  EXPECT_TRUE(weft::reduceIsaSupported(ReduceIsa::kScalar));
  EXPECT_STREQ(weft::reduceIsaName(weft::reduceIsaActive()),
               weft::reduceIsaName(weft::reduceIsaActive()));
}

TEST(ReduceApi, PublicEntryPointsUseTheChosenVariant) {
  const uint16_t a[3] = {0x3C00, 0x3C01, 0x7BFF};  // bfloat16-agnostic: binary16 bits
  const uint16_t b[3] = {0x1000, 0x1000, 0x4C00};
  uint16_t out[3] = {};
  weft::reduceElements(weftFloat16, weftSum, out, a, b, 3);
  EXPECT_EQ(out[0], 0x3C00);
  EXPECT_EQ(out[1], 0x3C02);
  EXPECT_EQ(out[2], 0x7C00);
  weft::finishAverage(weftFloat16, out, 1, 2);
  EXPECT_EQ(out[0], 0x3800);  // 0.5
  // Unknown datatypes and ops leave dst alone.
  out[0] = 7;
  weft::reduceElements(weftNumTypes, weftSum, out, a, b, 1);
  weft::reduceElements(weftFloat16, weftNumOps, out, a, b, 1);
  EXPECT_EQ(out[0], 7);
}

TEST(ReduceApi, WithEntryPointsMatchTheTables) {
  int32_t a[5] = {1, -2, 3, 2147483647, -5};
  int32_t b[5] = {10, 20, -30, 1, -5};
  for (int i = 0; i < weft::kNumReduceIsas; ++i) {
    const ReduceIsa isa = static_cast<ReduceIsa>(i);
    if (!weft::reduceIsaSupported(isa)) continue;
    int32_t out[5] = {};
    weft::reduceElementsWith(isa, weftInt32, weftSum, out, a, b, 5);
    EXPECT_EQ(out[3], static_cast<int32_t>(0x80000000u)) << weft::reduceIsaName(isa);  // wraps
    EXPECT_EQ(out[4], -10);
    weft::finishAverageWith(isa, weftInt32, out, 5, 2);
    EXPECT_EQ(out[0], 5);
    EXPECT_EQ(out[1], 9);
    EXPECT_EQ(out[2], -13);  // truncates toward zero
  }
}

}  // namespace
}  // namespace reduce_test
