// Small helpers of the multi-process tests (see mp_common.h).
#include "mp_common.h"

namespace mp {

const char* opName(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return "sum";
    case weftProd:
      return "prod";
    case weftMax:
      return "max";
    case weftMin:
      return "min";
    case weftAvg:
      return "avg";
    default:
      return "?";
  }
}

uint64_t hashBytes(const void* data, size_t bytes) {
  // FNV-1a, 64 bit.
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace mp
