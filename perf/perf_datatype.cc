// Names, sizes and support flags of weft's datatypes and ops for the perf tools.
#include "perf_datatype.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Every datatype runs: the host executor reduces all ten. Check values are
// small integers, exact in every type (up to 256 in bfloat16, 2048 in half).
const std::vector<PerfTypeInfo> kTypes = {
    {weftInt8, "int8", 1, true, true},       {weftUint8, "uint8", 1, true, true},
    {weftInt32, "int32", 4, true, true},     {weftUint32, "uint32", 4, true, true},
    {weftInt64, "int64", 8, true, true},     {weftUint64, "uint64", 8, true, true},
    {weftFloat16, "half", 2, true, false},   {weftFloat32, "float", 4, true, false},
    {weftFloat64, "double", 8, true, false}, {weftBfloat16, "bfloat16", 2, true, false},
};

const std::vector<PerfOpInfo> kOps = {
    {weftSum, "sum", true},       {weftProd, "prod", true},       {weftMax, "max", true},
    {weftMin, "min", true},       {weftAvg, "avg", true},         {weftBand, "band", true, true},
    {weftBor, "bor", true, true}, {weftBxor, "bxor", true, true},
};

struct Alias {
  const char* alias;
  const char* name;
};
const Alias kTypeAliases[] = {{"char", "int8"},      {"int", "int32"},     {"float16", "half"},
                              {"fp16", "half"},      {"float32", "float"}, {"fp32", "float"},
                              {"float64", "double"}, {"fp64", "double"},   {"bf16", "bfloat16"}};

}  // namespace

const std::vector<PerfTypeInfo>& PerfAllTypes() { return kTypes; }
const std::vector<PerfOpInfo>& PerfAllOps() { return kOps; }

const PerfTypeInfo* PerfFindType(const char* name) {
  for (const Alias& alias : kTypeAliases) {
    if (std::strcmp(name, alias.alias) == 0) name = alias.name;
  }
  for (const PerfTypeInfo& info : kTypes) {
    if (std::strcmp(name, info.name) == 0) return &info;
  }
  return nullptr;
}

const PerfTypeInfo& PerfTypeOf(weftDataType_t type) {
  for (const PerfTypeInfo& info : kTypes) {
    if (info.type == type) return info;
  }
  std::fprintf(stderr, "perf: unknown datatype %d\n", static_cast<int>(type));
  std::abort();
}

const PerfOpInfo* PerfFindOp(const char* name) {
  for (const PerfOpInfo& info : kOps) {
    if (std::strcmp(name, info.name) == 0) return &info;
  }
  return nullptr;
}

const PerfOpInfo& PerfOpOf(weftRedOp_t op) {
  for (const PerfOpInfo& info : kOps) {
    if (info.op == op) return info;
  }
  std::fprintf(stderr, "perf: unknown reduction op %d\n", static_cast<int>(op));
  std::abort();
}
