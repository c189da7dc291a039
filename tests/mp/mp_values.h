// Element values of mp_coll_full, for all ten datatypes without templates:
// the per-rank reduction inputs (small integers, so every sum, product, min,
// max and average has one exact answer whatever order a schedule combines
// ranks in), the reference results each rank computes on its own from them,
// byte patterns for the data-movement collectives, and element comparison
// that prints the first mismatch. half and bfloat16 are encoded here (round to
// nearest even), independently of the library's conversions.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mp {

constexpr weftDataType_t kAllTypes[] = {weftInt8,    weftUint8,   weftInt32,   weftUint32,
                                        weftInt64,   weftUint64,  weftFloat16, weftFloat32,
                                        weftFloat64, weftBfloat16};
constexpr weftRedOp_t kAllOps[] = {weftSum, weftProd, weftMax, weftMin,
                                   weftAvg, weftBand, weftBor, weftBxor};

size_t dtSize(weftDataType_t dt);
const char* dtName(weftDataType_t dt);
// False for half and bfloat16 in builds whose host reductions cannot reduce them yet.
bool dtReducible(weftDataType_t dt);
// False for a bitwise op on a float type (weft refuses the call).
bool opApplies(weftDataType_t dt, weftRedOp_t op);

uint16_t floatToHalfBits(float f);
float halfBitsToFloat(uint16_t h);
uint16_t floatToBf16Bits(float f);

// Rank r's reduction input at element index i, as an exact integer
// (non-negative for the unsigned types).
int64_t reduceInputValue(weftDataType_t dt, weftRedOp_t op, int r, size_t i);
// Elements first .. first+count-1 of rank r's input, written as dt.
void fillReduceInput(weftDataType_t dt, weftRedOp_t op, int r, size_t first, size_t count,
                     void* dst);
// Elements first .. first+count-1 of the reduction over ranks 0..nranks-1, as dt.
void fillReduceExpected(weftDataType_t dt, weftRedOp_t op, int nranks, size_t first, size_t count,
                        void* dst);

// `bytes` bytes that depend on `seed` and on each byte's position.
void fillPattern(void* dst, size_t bytes, uint64_t seed);
std::vector<unsigned char> pattern(size_t bytes, uint64_t seed);
// A seed mixing several small numbers (rank, peer, message index...).
uint64_t seedOf(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

// "" when the count elements are bitwise equal, else a sentence with the
// number of wrong elements and the first one (got vs want).
std::string compareElems(weftDataType_t dt, const void* got, const void* want, size_t count);

}  // namespace mp
