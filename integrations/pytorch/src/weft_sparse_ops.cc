// all_reduce of a sparse COO tensor, as gloo offers it: ReduceOp.SUM only, and
// the tensor's contents are replaced by the coalesced sum of every rank's
// tensor. Ranks hold different numbers of entries, so it takes two steps:
//   1. an allgather of each rank's entry count and shape, waited for here in
//      the calling thread, since the next step's buffer sizes depend on it;
//   2. allgathers of the indices and of the values, each rank's padded to the
//      largest count, left to the completion queue like any other call; the
//      copy-out then keeps each rank's real entries and sums them (coalesce).
// The communicator's lock is held across both steps, so that no other call of
// this process slips between them: every rank must see the same order.
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>
#include <vector>

#include "element_types.h"
#include "tensor_staging.h"
#include "weft_ops.h"

namespace weft_torch {
namespace {

void check(weftResult_t rc, const char* what) {
  if (rc != weftSuccess) throwWeftError(rc, what);
}

// One rank's record in step 1: entry count, sparse and dense dims, then the
// sizes. A fixed length keeps the allgather's count the same on every rank.
constexpr int64_t kMaxDims = 64;
constexpr int64_t kMetaLen = 4 + kMaxDims;
enum MetaField : int64_t { kNnz = 0, kSparseDim = 1, kDenseDim = 2, kDims = 3, kSizes = 4 };

at::Tensor describe(const at::Tensor& t) {
  at::Tensor meta = at::zeros({kMetaLen}, at::kLong);
  int64_t* m = meta.data_ptr<int64_t>();
  m[kNnz] = t._nnz();
  m[kSparseDim] = t.sparse_dim();
  m[kDenseDim] = t.dense_dim();
  m[kDims] = t.dim();
  for (int64_t d = 0; d < t.dim(); ++d) m[kSizes + d] = t.size(d);
  return meta;
}

// Every rank compares every record with rank 0's, so all reach one verdict.
void checkSameShape(const at::Tensor& metas, int size) {
  const int64_t* first = metas.data_ptr<int64_t>();
  for (int r = 1; r < size; ++r) {
    const int64_t* m = first + r * kMetaLen;
    TORCH_CHECK(std::equal(m + kSparseDim, m + kMetaLen, first + kSparseDim),
                "weft: all_reduce of sparse tensors needs the same size, sparse_dim and dense_dim "
                "on every rank; rank ",
                r, " differs from rank 0");
  }
}

// `part`'s rows (dim `dim`) at the start of a zero tensor `rows` long in that dim.
at::Tensor padded(const at::Tensor& part, int64_t dim, int64_t rows) {
  std::vector<int64_t> shape = part.sizes().vec();
  shape[dim] = rows;
  at::Tensor out = at::zeros(shape, part.options());
  out.narrow(dim, 0, part.size(dim)).copy_(part);
  return out;
}

// An empty tensor with a leading dimension of `size` in front of `one`'s shape.
at::Tensor stacked(const at::Tensor& one, int size) {
  std::vector<int64_t> shape = one.sizes().vec();
  shape.insert(shape.begin(), size);
  return at::empty(shape, one.options());
}

}  // namespace

Submission WeftComm::allreduceSparse(at::Tensor& user, const c10d::ReduceOp& op) {
  TORCH_CHECK(static_cast<c10d::ReduceOp::RedOpType>(op) == c10d::ReduceOp::SUM,
              "weft: all_reduce of a sparse tensor supports ReduceOp.SUM only (as gloo)");
  TORCH_CHECK(user.is_cpu(), "weft: the sparse tensor must be on the CPU");
  TORCH_CHECK(user.dim() <= kMaxDims, "weft: a sparse tensor of ", user.dim(),
              " dimensions is over the ", kMaxDims, " that all_reduce takes");
  at::NoGradGuard data;
  at::Tensor input = user.coalesce();
  at::Tensor meta = describe(input);
  at::Tensor metas = at::empty({size_, kMetaLen}, at::kLong);

  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_, "weft: all_reduce of a sparse tensor cannot join a coalesced batch");
  weftRequest_t req = nullptr;
  check(weftAllGatherAsync(meta.data_ptr(), metas.data_ptr(), kMetaLen, weftInt64, comm_, &req),
        "sparse allreduce (sizes)");
  check(weftWait(&req), "sparse allreduce (sizes)");
  checkSameShape(metas, size_);
  std::vector<int64_t> counts(size_);
  for (int r = 0; r < size_; ++r) counts[r] = metas.data_ptr<int64_t>()[r * kMetaLen + kNnz];
  const int64_t most = *std::max_element(counts.begin(), counts.end());

  Submission s;
  s.outputs = {user};
  at::Tensor sendIdx = padded(input._indices(), 1, most);
  at::Tensor sendVal = padded(input._values(), 0, most);
  at::Tensor recvIdx = stacked(sendIdx, size_);
  at::Tensor recvVal = stacked(sendVal, size_);
  for (auto [send, recv] : {std::pair(sendIdx, recvIdx), std::pair(sendVal, recvVal)}) {
    const Moved m = movedAs(send);
    if (m.count == 0) continue;  // no entries anywhere, or an empty dimension
    req = nullptr;
    check(weftAllGatherAsync(send.data_ptr(), recv.data_ptr(), m.count, m.type, comm_, &req),
          "sparse allreduce");
    s.requests.push_back(req);
  }
  s.keepAlive = {sendIdx, sendVal};
  s.finish = [user, recvIdx, recvVal, counts, sizes = input.sizes().vec()]() {
    at::NoGradGuard data;
    std::vector<at::Tensor> idx, val;
    for (size_t r = 0; r < counts.size(); ++r) {
      idx.push_back(recvIdx[r].narrow(1, 0, counts[r]));
      val.push_back(recvVal[r].narrow(0, 0, counts[r]));
    }
    at::Tensor sum = at::sparse_coo_tensor(at::cat(idx, 1), at::cat(val, 0), sizes,
                                           recvVal.options().layout(at::kSparse));
    copyInto(user, sum.coalesce());
  };
  return s;
}

}  // namespace weft_torch
