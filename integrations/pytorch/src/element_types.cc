// See element_types.h.
#include "element_types.h"

#include <c10/util/Exception.h>

#include <utility>

namespace weft_torch {
namespace {

// The torch dtypes weft has a datatype of its own for.
constexpr std::pair<at::ScalarType, weftDataType_t> kOwnTypes[] = {
    {at::kChar, weftInt8},     {at::kByte, weftUint8},     {at::kInt, weftInt32},
    {at::kLong, weftInt64},    {at::kHalf, weftFloat16},   {at::kBFloat16, weftBfloat16},
    {at::kFloat, weftFloat32}, {at::kDouble, weftFloat64},
};

bool lookup(at::ScalarType t, weftDataType_t* out) {
  for (const auto& [torchType, weftType] : kOwnTypes)
    if (torchType == t) {
      *out = weftType;
      return true;
    }
  return false;
}

weftRedOp_t opOf(const c10d::ReduceOp& op) {
  switch (static_cast<c10d::ReduceOp::RedOpType>(op)) {
    case c10d::ReduceOp::SUM:
      return weftSum;
    case c10d::ReduceOp::PRODUCT:
      return weftProd;
    case c10d::ReduceOp::MIN:
      return weftMin;
    case c10d::ReduceOp::MAX:
      return weftMax;
    case c10d::ReduceOp::AVG:
      return weftAvg;
    default:
      TORCH_CHECK(false, "weft: unsupported ReduceOp ", static_cast<int>(op),
                  " (weft has SUM, PRODUCT, MIN, MAX and AVG; no bitwise ops or PREMUL_SUM)");
  }
}

}  // namespace

weftDataType_t weftTypeOf(at::ScalarType t) {
  weftDataType_t type = weftFloat32;
  TORCH_CHECK(lookup(t, &type), "weft: cannot reduce tensors of dtype ", t,
              " (weft reduces int8, uint8, int32, int64, float16, bfloat16, float32, float64, and "
              "bool and complex as described in docs/pytorch.md)");
  return type;
}

Moved movedAs(const at::Tensor& t) {
  const size_t n = static_cast<size_t>(t.numel());
  weftDataType_t type = weftUint8;
  if (lookup(t.scalar_type(), &type)) return {type, n};
  return {weftUint8, n * t.element_size()};
}

Reduced reducedAs(const at::Tensor& t, const c10d::ReduceOp& torchOp) {
  const weftRedOp_t op = opOf(torchOp);
  const size_t n = static_cast<size_t>(t.numel());
  const at::ScalarType type = t.scalar_type();
  if (type == at::kBool) {
    TORCH_CHECK(op != weftAvg, "weft: AVG of bool tensors has no bool result");
    const weftRedOp_t asByte = op == weftSum ? weftMax : op == weftProd ? weftMin : op;
    return {weftUint8, n, asByte};
  }
  if (type == at::kComplexFloat || type == at::kComplexDouble) {
    TORCH_CHECK(op == weftSum || op == weftAvg,
                "weft: complex tensors reduce with SUM and AVG only (complex numbers have no "
                "order for MIN and MAX, and a product mixes the parts)");
    return {type == at::kComplexFloat ? weftFloat32 : weftFloat64, 2 * n, op};
  }
  return {weftTypeOf(type), n, op};
}

}  // namespace weft_torch
