// How the weft backend hands a torch dtype to weft. Calls that only move data
// (broadcast, the gathers, all-to-all, scatter, send/recv) take any dtype:
// one weft has no type for (bool, int16, complex, ...) travels as raw bytes,
// which arrive unchanged. Reductions need weft to know the arithmetic:
//   - complex: pairs of reals, for SUM and AVG (each part adds apart); complex
//     numbers have no order, and a product mixes the parts, so MIN, MAX and
//     PRODUCT are refused;
//   - bool: uint8, with SUM as logical or and PRODUCT as logical and (so the
//     result is still 0 or 1), MIN and MAX as they are; AVG refused. This is
//     what torch's NCCL backend does with bool;
//   - any other dtype weft lacks (int16, ...): refused with a sentence.
// BAND, BOR and BXOR take the integer dtypes and bool; PREMUL_SUM (torch's
// _make_nccl_premul_sum) multiplies by its factor, converted to the dtype,
// then sums: weftRedOpCreatePreMulSum.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>

#include "weft/weft.h"

namespace weft_torch {

// weft's datatype for a torch dtype; throws for dtypes weft lacks.
weftDataType_t weftTypeOf(at::ScalarType t);

// What weft moves for a (contiguous) tensor: its elements, or its bytes.
struct Moved {
  weftDataType_t type;
  size_t count;
};
Moved movedAs(const at::Tensor& t);

// What weft reduces for a (contiguous) tensor under `op`; throws a sentence
// for a dtype and op that have no meaning together.
struct Reduced {
  weftDataType_t type;
  size_t count;
  weftRedOp_t op;
  bool premul = false;  // PREMUL_SUM: op is made per call from `factor` (CallOp)
  double factor = 0.0;
};
Reduced reducedAs(const at::Tensor& t, const c10d::ReduceOp& op);

// The weft op of one call: r.op, or for PREMUL_SUM a weftRedOpCreatePreMulSum
// op of r.factor in r.type, destroyed with this object. The call reads the
// factor when it is issued, so the object may go once the call returned.
class CallOp {
 public:
  CallOp(weftComm_t comm, const Reduced& r);
  ~CallOp();
  CallOp(const CallOp&) = delete;
  CallOp& operator=(const CallOp&) = delete;
  weftRedOp_t op() const { return op_; }

 private:
  weftComm_t comm_;
  weftRedOp_t op_;
  bool made_ = false;
};

}  // namespace weft_torch
