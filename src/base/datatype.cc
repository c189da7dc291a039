// The datatype and reduction-op table (datatype.h).
#include "base/datatype.h"

namespace weft {

size_t datatypeSize(weftDataType_t dt) {
  switch (dt) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    case weftInt64:
    case weftUint64:
    case weftFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* datatypeName(weftDataType_t dt) {
  switch (dt) {
    case weftInt8:
      return "int8";
    case weftUint8:
      return "uint8";
    case weftInt32:
      return "int32";
    case weftUint32:
      return "uint32";
    case weftInt64:
      return "int64";
    case weftUint64:
      return "uint64";
    case weftFloat16:
      return "half";
    case weftFloat32:
      return "float";
    case weftFloat64:
      return "double";
    case weftBfloat16:
      return "bfloat16";
    default:
      return "unknown";
  }
}

const char* redOpName(weftRedOp_t op) {
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
    case weftBand:
      return "band";
    case weftBor:
      return "bor";
    case weftBxor:
      return "bxor";
    case kOpPreMulSum:
      return "premulsum";
    default:
      return "unknown";
  }
}

bool datatypeReducible(weftDataType_t dt) { return datatypeSize(dt) != 0; }

bool datatypeInteger(weftDataType_t dt) {
  switch (dt) {
    case weftInt8:
    case weftUint8:
    case weftInt32:
    case weftUint32:
    case weftInt64:
    case weftUint64:
      return true;
    default:
      return false;
  }
}

}  // namespace weft
