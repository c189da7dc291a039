// See element_types.h.
#include "element_types.h"

#include <c10/util/Exception.h>

#include <cstdint>
#include <cstring>
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
    case c10d::ReduceOp::BAND:
      return weftBand;
    case c10d::ReduceOp::BOR:
      return weftBor;
    case c10d::ReduceOp::BXOR:
      return weftBxor;
    case c10d::ReduceOp::PREMUL_SUM:
      return weftSum;  // and Reduced::premul
    default:
      TORCH_CHECK(false, "weft: unsupported ReduceOp ", static_cast<int>(op),
                  " (weft has SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR and PREMUL_SUM)");
  }
}

// PREMUL_SUM's factor: a double, or a one-element tensor read now.
double premulFactor(const c10d::ReduceOp& op) {
  const auto* s = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(s != nullptr, "weft: PREMUL_SUM without its factor");
  if (s->tensor_factors.empty()) return s->double_factor;
  const at::Tensor& f = s->tensor_factors.front();
  TORCH_CHECK(f.numel() == 1, "weft: PREMUL_SUM's factor tensor must hold one element, not ",
              f.numel());
  return f.item<double>();
}

// `value` as one element of `type` (the scalar of weftRedOpCreatePreMulSum).
void scalarAs(weftDataType_t type, double value, unsigned char out[8]) {
  auto put = [&](auto v) { std::memcpy(out, &v, sizeof v); };
  switch (type) {
    case weftInt8:
      return put(static_cast<int8_t>(value));
    case weftUint8:
      return put(static_cast<uint8_t>(value));
    case weftInt32:
      return put(static_cast<int32_t>(value));
    case weftUint32:
      return put(static_cast<uint32_t>(value));
    case weftInt64:
      return put(static_cast<int64_t>(value));
    case weftUint64:
      return put(static_cast<uint64_t>(value));
    case weftFloat16:
      return put(at::Half(static_cast<float>(value)).x);
    case weftBfloat16:
      return put(at::BFloat16(static_cast<float>(value)).x);
    case weftFloat32:
      return put(static_cast<float>(value));
    default:
      return put(value);
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
  if (torchOp == c10d::ReduceOp::PREMUL_SUM) {
    TORCH_CHECK(type != at::kBool, "weft: PREMUL_SUM of bool tensors has no bool result");
    Reduced r = reducedAs(t, c10d::ReduceOp(c10d::ReduceOp::SUM));
    r.premul = true;
    r.factor = premulFactor(torchOp);
    return r;
  }
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

CallOp::CallOp(weftComm_t comm, const Reduced& r) : comm_(comm), op_(r.op) {
  if (!r.premul) return;
  unsigned char scalar[8] = {};
  scalarAs(r.type, r.factor, scalar);
  const weftResult_t rc =
      weftRedOpCreatePreMulSum(&op_, scalar, r.type, weftScalarHostImmediate, comm);
  TORCH_CHECK(rc == weftSuccess, "weft: PREMUL_SUM: ", weftGetLastError(comm));
  made_ = true;
}

CallOp::~CallOp() {
  if (made_) weftRedOpDestroy(op_, comm_);
}

}  // namespace weft_torch
