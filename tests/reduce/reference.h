// An independent scalar reference for the reduction kernels, written apart
// from collectives/ (no bit tricks shared with them): integers through wider
// arithmetic and explicit truncation, 16-bit floats decoded with ldexp and
// rounded with frexp/nearbyint, float results' NaNs made canonical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/weft.h"

namespace reduce_ref {

// The value of 16-bit float bits, exactly (as a float: every such value is one).
float decodeHalf(uint16_t bits);
float decodeBf16(uint16_t bits);
// Round a float to the format, to nearest even; overflow gives Inf, NaN gives
// the canonical quiet NaN (0x7E00 / 0x7FC0).
uint16_t encodeHalf(float value);
uint16_t encodeBf16(float value);

// out = a op b, element by element, for `count` elements of dt stored as bytes
// (unaligned storage is fine). weftAvg combines as a sum.
void combine(weftDataType_t dt, weftRedOp_t op, const uint8_t* a, const uint8_t* b, uint8_t* out,
             size_t count);
// True when op applies to dt: the bitwise ops take the integer types only.
bool applies(weftDataType_t dt, weftRedOp_t op);
// buf = buf / nranks (the end of weftAvg).
void divide(weftDataType_t dt, uint8_t* buf, size_t count, int nranks);

}  // namespace reduce_ref
