// What weft knows of each datatype and reduction op, for every layer: sizes
// for buffer arithmetic and names for error sentences. The arithmetic itself
// lives with the collectives (collectives/reduce.h).
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

// Bytes per element, 0 for an unknown datatype.
size_t datatypeSize(weftDataType_t dt);
const char* datatypeName(weftDataType_t dt);
const char* redOpName(weftRedOp_t op);
// True for every weft datatype: the host executor reduces all of them.
bool datatypeReducible(weftDataType_t dt);
// True for the integer datatypes (the only ones the bitwise ops take).
bool datatypeInteger(weftDataType_t dt);
// True when `op` (one of weftRedOp_t's named ops) applies to `dt`.
inline bool redOpApplies(weftDataType_t dt, weftRedOp_t op) {
  return (op != weftBand && op != weftBor && op != weftBxor) || datatypeInteger(dt);
}

// The op a call carries once its weftRedOpCreatePreMulSum handle is resolved
// (core/premul_op.h): one value on every rank, whatever handles each rank
// holds, so the call header compares it; executed as a scaled sum.
constexpr weftRedOp_t kOpPreMulSum = weftNumOps;

}  // namespace weft
