// Datatypes and reduction ops as the perf tools see them: names for -d/-o,
// element sizes, which ones this weft build supports, and a helper that runs
// a templated function with the C++ type of a weft datatype.
#ifndef WEFT_PERF_PERF_DATATYPE_H
#define WEFT_PERF_PERF_DATATYPE_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf_half.h"

struct PerfTypeInfo {
  weftDataType_t type;
  const char* name;       // as printed in the "type" column
  size_t size;            // bytes per element
  bool library_supports;  // false: reported as an error line, never run
  bool integer;           // the bitwise ops apply
};

// nullptr when the name is unknown. Accepts nccl-tests names and a few aliases.
const PerfTypeInfo* PerfFindType(const char* name);
const PerfTypeInfo& PerfTypeOf(weftDataType_t type);
// Every datatype weft defines, in enum order (for `-d all` and help text).
const std::vector<PerfTypeInfo>& PerfAllTypes();

struct PerfOpInfo {
  weftRedOp_t op;
  const char* name;
  bool library_supports;
  bool integers_only = false;  // the bitwise ops: weft refuses them on float types
};

const PerfOpInfo* PerfFindOp(const char* name);
const PerfOpInfo& PerfOpOf(weftRedOp_t op);
const std::vector<PerfOpInfo>& PerfAllOps();

// Calls fn(T{}) with the host type of `type` and returns true, or false for an
// unknown type. Half and bfloat16 get the fill-and-compare stand-ins of
// perf_half.h.
template <typename Fn>
bool PerfVisitType(weftDataType_t type, Fn&& fn) {
  switch (type) {
    case weftInt8:
      fn(int8_t{});
      return true;
    case weftUint8:
      fn(uint8_t{});
      return true;
    case weftInt32:
      fn(int32_t{});
      return true;
    case weftUint32:
      fn(uint32_t{});
      return true;
    case weftInt64:
      fn(int64_t{});
      return true;
    case weftUint64:
      fn(uint64_t{});
      return true;
    case weftFloat32:
      fn(float{});
      return true;
    case weftFloat64:
      fn(double{});
      return true;
    case weftFloat16:
      fn(PerfHalf{});
      return true;
    case weftBfloat16:
      fn(PerfBfloat16{});
      return true;
    default:
      return false;
  }
}

#endif  // WEFT_PERF_PERF_DATATYPE_H
