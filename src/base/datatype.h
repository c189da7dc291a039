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

}  // namespace weft
