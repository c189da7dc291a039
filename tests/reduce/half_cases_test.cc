// float16 and bfloat16 edge cases with their expected bits worked out by hand:
// ties (rounded to even, both ways), overflow to Inf, subnormals and the step
// to the smallest normal, signed zeros, NaN inputs and NaN-producing ops (the
// canonical NaN comes out), and the avg division. Each case runs through every
// variant and through the test's own reference; then every one of the 65536
// bit patterns goes through combine and divide unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "collectives/reduce.h"
#include "reference.h"
#include "variants.h"

namespace reduce_test {
namespace {

struct Case {
  weftDataType_t dt;
  weftRedOp_t op;  // weftAvg means "divide a by nranks"
  uint16_t a;
  uint16_t b;  // for weftAvg: nranks
  uint16_t want;
};

const Case kCases[] = {
    // binary16: 1 + 2^-11 is a tie between 1 and 1+2^-10: stays at even 1.0 ...
    {weftFloat16, weftSum, 0x3C00, 0x1000, 0x3C00},
    // ... 1+2^-10 + 2^-11 is a tie too: goes up to the even 1+2^-9.
    {weftFloat16, weftSum, 0x3C01, 0x1000, 0x3C02},
    {weftFloat16, weftSum, 0x3C00, 0x1001, 0x3C01},  // just above the tie
    {weftFloat16, weftSum, 0x7BFF, 0x4C00, 0x7C00},  // 65504 + 16 = 65520: tie -> Inf
    {weftFloat16, weftSum, 0x7BFF, 0x4800, 0x7BFF},  // 65504 + 8 rounds down
    {weftFloat16, weftSum, 0xFBFF, 0xCC00, 0xFC00},  // -Inf
    {weftFloat16, weftSum, 0x03FF, 0x0001, 0x0400},  // largest subnormal + 1 ulp: smallest normal
    {weftFloat16, weftSum, 0x0001, 0x8001, 0x0000},  // x + -x = +0
    {weftFloat16, weftSum, 0x8000, 0x8000, 0x8000},  // -0 + -0 = -0
    {weftFloat16, weftSum, 0x7C00, 0xFC00, 0x7E00},  // Inf - Inf: canonical NaN
    {weftFloat16, weftSum, 0x7C01, 0x3C00, 0x7E00},  // signalling NaN in
    {weftFloat16, weftSum, 0xFE00, 0x3C00, 0x7E00},  // negative NaN in
    {weftFloat16, weftSum, 0x3C00, 0x7D55, 0x7E00},  // NaN payload in b
    {weftFloat16, weftSum, 0x7C00, 0x3C00, 0x7C00},
    {weftFloat16, weftProd, 0x0001, 0x3800, 0x0000},  // 2^-24 * 0.5: tie -> 0
    {weftFloat16, weftProd, 0x0003, 0x3800, 0x0002},  // 1.5 units -> 2
    {weftFloat16, weftProd, 0x0005, 0x3800, 0x0002},  // 2.5 units -> 2
    {weftFloat16, weftProd, 0x5C00, 0x5C00, 0x7C00},  // 256 * 256 = 65536 -> Inf
    {weftFloat16, weftProd, 0x0400, 0x3400, 0x0100},  // 2^-14 * 0.25 = 2^-16, subnormal
    {weftFloat16, weftProd, 0x7C00, 0x0000, 0x7E00},  // Inf * 0
    {weftFloat16, weftProd, 0x8000, 0x3C00, 0x8000},
    {weftFloat16, weftMax, 0x7E00, 0x3C00, 0x7E00},
    {weftFloat16, weftMax, 0x3C00, 0x7E00, 0x7E00},
    {weftFloat16, weftMin, 0x3C00, 0xFC01, 0x7E00},
    {weftFloat16, weftMax, 0x8000, 0x0000, 0x8000},  // equal: the first operand
    {weftFloat16, weftMax, 0x0000, 0x8000, 0x0000},
    {weftFloat16, weftMin, 0x0000, 0x8000, 0x0000},
    {weftFloat16, weftMin, 0x8000, 0x0000, 0x8000},
    {weftFloat16, weftMax, 0xFC00, 0x0001, 0x0001},
    {weftFloat16, weftMin, 0xFC00, 0x0001, 0xFC00},
    {weftFloat16, weftAvg, 0x3C00, 3, 0x3555},  // 1/3
    {weftFloat16, weftAvg, 0x0001, 2, 0x0000},  // half a unit: tie -> 0
    {weftFloat16, weftAvg, 0x0003, 2, 0x0002},
    {weftFloat16, weftAvg, 0x7BFF, 1, 0x7BFF},
    {weftFloat16, weftAvg, 0xFD00, 4, 0x7E00},
    // bfloat16: 1 + 2^-8 is a tie: down to 1.0; 1+2^-7 + 2^-8: up to 1+2^-6.
    {weftBfloat16, weftSum, 0x3F80, 0x3B80, 0x3F80},
    {weftBfloat16, weftSum, 0x3F81, 0x3B80, 0x3F82},
    // (2 - 2^-7) 2^127 + 2^119 = (2 - 2^-8) 2^127, finite in float32, a tie
    // in bfloat16 whose even neighbour is Inf.
    {weftBfloat16, weftSum, 0x7F7F, 0x7B00, 0x7F80},
    {weftBfloat16, weftSum, 0x0001, 0x0001, 0x0002},  // subnormals
    {weftBfloat16, weftSum, 0x007F, 0x0001, 0x0080},  // -> smallest normal
    {weftBfloat16, weftSum, 0xFFC1, 0x3F80, 0x7FC0},
    {weftBfloat16, weftSum, 0x7F80, 0xFF80, 0x7FC0},
    {weftBfloat16, weftSum, 0x8000, 0x8000, 0x8000},
    {weftBfloat16, weftProd, 0x0001, 0x3F00, 0x0000},  // 2^-134: tie -> 0
    {weftBfloat16, weftProd, 0x0003, 0x3F00, 0x0002},  // 1.5 units -> 2
    {weftBfloat16, weftProd, 0x4380, 0x4380, 0x4780},  // 256 * 256 = 65536
    {weftBfloat16, weftProd, 0x7F00, 0x4000, 0x7F80},  // 2^127 * 2 overflows
    {weftBfloat16, weftMax, 0x8000, 0x0000, 0x8000},
    {weftBfloat16, weftMin, 0x7FC1, 0x0000, 0x7FC0},
    {weftBfloat16, weftMax, 0x0000, 0xFF81, 0x7FC0},
    {weftBfloat16, weftAvg, 0x3F80, 3, 0x3EAB},  // 1/3 rounds up
    {weftBfloat16, weftAvg, 0x0001, 2, 0x0000},
    {weftBfloat16, weftAvg, 0x0003, 2, 0x0002},
};

std::string describe(const Case& c) {
  char text[96];
  std::snprintf(text, sizeof(text), "%s %s a=0x%04x b=0x%04x want 0x%04x", weft::datatypeName(c.dt),
                weft::redOpName(c.op), c.a, c.b, c.want);
  return text;
}

uint16_t runCase(const weft::ReduceKernels& table, const Case& c) {
  uint16_t x = c.a;
  if (c.op == weftAvg) {
    table.divide[c.dt](&x, 1, c.b);
    return x;
  }
  uint16_t out = 0;
  table.combine[c.dt][c.op](&out, &c.a, &c.b, 1);
  return out;
}

uint16_t referenceCase(const Case& c) {
  uint16_t x = c.a;
  if (c.op == weftAvg) {
    reduce_ref::divide(c.dt, reinterpret_cast<uint8_t*>(&x), 1, c.b);
    return x;
  }
  uint16_t out = 0;
  reduce_ref::combine(c.dt, c.op, reinterpret_cast<const uint8_t*>(&c.a),
                      reinterpret_cast<const uint8_t*>(&c.b), reinterpret_cast<uint8_t*>(&out), 1);
  return out;
}

bool isNan(weftDataType_t dt, uint16_t bits) {
  const uint16_t inf = dt == weftFloat16 ? 0x7C00 : 0x7F80;
  return (bits & 0x7FFF) > inf;
}

TEST(HalfCases, ReferenceAgreesWithTheWorkedCases) {
  for (const Case& c : kCases) EXPECT_EQ(referenceCase(c), c.want) << describe(c);
}

TEST(HalfCases, EveryVariantAgreesWithTheWorkedCases) {
  int ran = 0;
  for (const Variant& v : allVariants()) {
    if (v.table == nullptr || !v.runnable) continue;
    ++ran;
    for (const Case& c : kCases)
      EXPECT_EQ(runCase(*v.table, c), c.want) << v.name << " " << describe(c);
  }
  EXPECT_GE(ran, 1);
}

// Every bit pattern, in one call of 65536 elements: a + (-0) = a, max(a, a) = a,
// a / 1 = a, except that NaNs come out canonical.
TEST(HalfCases, EveryBitPatternSurvivesIdentityOps) {
  std::vector<uint16_t> all(65536), negZero(65536, 0x8000), out(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (weftDataType_t dt : {weftFloat16, weftBfloat16}) {
    const uint16_t nan = dt == weftFloat16 ? 0x7E00 : 0x7FC0;
    for (const Variant& v : allVariants()) {
      if (v.table == nullptr || !v.runnable) continue;
      for (weftRedOp_t op : {weftSum, weftMax, weftMin, weftAvg}) {
        const uint16_t* other = op == weftSum || op == weftAvg ? negZero.data() : all.data();
        if (op == weftAvg) {
          out = all;
          v.table->divide[dt](out.data(), out.size(), 1);
        } else {
          v.table->combine[dt][op](out.data(), all.data(), other, all.size());
        }
        int wrong = 0;
        for (size_t i = 0; i < all.size() && wrong < 5; ++i) {
          const uint16_t want = isNan(dt, all[i]) ? nan : all[i];
          if (out[i] != want) {
            ++wrong;
            ADD_FAILURE() << v.name << " " << weft::datatypeName(dt) << " " << weft::redOpName(op)
                          << " on 0x" << std::hex << all[i] << " gave 0x" << out[i];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace reduce_test
