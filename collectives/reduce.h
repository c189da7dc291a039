// Element-wise reductions on host memory for every datatype and op weft
// supports. Loops are written so the compiler vectorises them (this file is
// built with -O3); each element is combined in one fixed order, so results are
// bitwise reproducible for a given algorithm.
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

// Bytes per element, 0 for an unknown datatype.
size_t datatypeSize(weftDataType_t dt);
const char* datatypeName(weftDataType_t dt);
const char* redOpName(weftRedOp_t op);
// True when the host executor can reduce this datatype (all but fp16/bf16 today).
bool datatypeReducible(weftDataType_t dt);

// dst[i] = a[i] op b[i] for i < count. dst may be the same pointer as a or b.
// For weftAvg this is a sum; finishAverage divides at the end.
void reduceElements(weftDataType_t dt, weftRedOp_t op, void* dst, const void* a, const void* b,
                    size_t count);
// buf[i] /= nranks (integer division truncates, as NCCL's ncclAvg does).
void finishAverage(weftDataType_t dt, void* buf, size_t count, int nranks);

}  // namespace weft
