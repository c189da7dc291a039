// Tensor checks, dtype/op mapping and the weft calls behind each torch
// collective. Every function starts the operation and returns at once; the
// work queue waits for the requests and runs the copy-out.
#include "weft_ops.h"

#include <c10/util/Exception.h>

#include "element_types.h"
#include "tensor_staging.h"

#include <cstring>
#include <numeric>

namespace weft_torch {
namespace {

const char* lastError() {
  const char* s = weftGetLastError(nullptr);
  return (s != nullptr && *s != '\0') ? s : "no detail";
}

void check(weftResult_t rc, const char* what) {
  if (rc != weftSuccess) throwWeftError(rc, what);
}

}  // namespace

namespace {

void checkSameType(const at::Tensor& a, const at::Tensor& b, const char* name) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "weft: ", name, " has dtype ", b.scalar_type(),
              " but the input has ", a.scalar_type());
}

void checkRoot(int root, int size, const char* what) {
  TORCH_CHECK(root >= 0 && root < size, "weft: ", what, " root ", root,
              " is out of range for a group of ", size);
}

}  // namespace

std::string failureSentence(weftResult_t rc, const char* what, const std::string& why) {
  if (rc == weftTimeout)
    return std::string("Timed out: weft's ") + what + " reached its timeout (WEFT_TIMEOUT): " + why;
  return std::string("weft: ") + what + " failed: " + weftGetErrorString(rc) + ": " + why;
}

void throwWeftError(weftResult_t rc, const char* what) {
  TORCH_CHECK(false, failureSentence(rc, what, lastError()));
}

WeftComm::WeftComm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size)
    : rank_(rank), size_(size) {
  static const char* kKey = "weft_unique_id";
  weftUniqueId id;
  if (rank == 0) {
    check(weftGetUniqueId(&id), "weftGetUniqueId");
    const auto* p = reinterpret_cast<const uint8_t*>(&id);
    store->set(kKey, std::vector<uint8_t>(p, p + sizeof(id)));
  } else {
    std::vector<uint8_t> bytes = store->get(kKey);
    TORCH_CHECK(bytes.size() == sizeof(id), "weft: the store's unique id has ", bytes.size(),
                " bytes, expected ", sizeof(id), " (a different weft version on rank 0?)");
    std::memcpy(&id, bytes.data(), sizeof(id));
  }
  check(weftCommInitRank(&comm_, size, id, rank), "weftCommInitRank");
}

WeftComm::WeftComm(weftComm_t adopted) : comm_(adopted) {
  check(weftCommUserRank(comm_, &rank_), "weftCommUserRank");
  check(weftCommCount(comm_, &size_), "weftCommCount");
}

WeftComm::~WeftComm() {
  if (comm_ != nullptr) {
    weftResult_t async = weftSuccess;
    weftCommGetAsyncError(comm_, &async);
    // A broken communicator is aborted: destroy would wait for peers that are gone.
    if (async != weftSuccess) {
      weftCommAbort(comm_);
    } else {
      weftCommDestroy(comm_);
    }
  }
}

Submission WeftComm::allreduce(at::Tensor& user, const c10d::ReduceOp& op) {
  Submission s;
  s.outputs = {user};
  at::Tensor t = writable(user, "tensor", true, s);
  const Reduced r = reducedAs(t, op);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  check(weftAllReduceAsync(t.data_ptr(), t.data_ptr(), r.count, r.type, CallOp(comm_, r).op(),
                           comm_, &req),
        "allreduce");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::allreduceCoalesced(std::vector<at::Tensor>& ts, const c10d::ReduceOp& op) {
  TORCH_CHECK(!ts.empty(), "weft: allreduce_coalesced got no tensors");
  std::vector<at::Tensor> flat;
  for (auto& t : ts) {
    checkWritable(t, "allreduce_coalesced tensor");
    checkSameType(ts[0], t, "allreduce_coalesced tensor");
    flat.push_back(t.reshape({-1}));
  }
  at::Tensor staged = at::cat(flat);
  Submission s = allreduce(staged, op);
  s.keepAlive = {staged};
  s.outputs = ts;
  s.finish = [ts, staged]() {
    int64_t off = 0;
    for (const auto& t : ts) {
      copyInto(t, staged.narrow(0, off, t.numel()).view(t.sizes()));
      off += t.numel();
    }
  };
  return s;
}

Submission WeftComm::broadcast(at::Tensor& user, int root) {
  checkRoot(root, size_, "broadcast");
  Submission s;
  s.outputs = {user};
  at::Tensor t = writable(user, "tensor", true, s);
  const Moved m = movedAs(t);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  check(weftBroadcastAsync(t.data_ptr(), t.data_ptr(), m.count, m.type, root, comm_, &req),
        "broadcast");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::reduce(at::Tensor& user, int root, const c10d::ReduceOp& op) {
  checkRoot(root, size_, "reduce");
  Submission s;
  s.outputs = {user};
  at::Tensor t = writable(user, "tensor", true, s);
  const Reduced r = reducedAs(t, op);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  check(weftReduceAsync(t.data_ptr(), t.data_ptr(), r.count, r.type, CallOp(comm_, r).op(), root,
                        comm_, &req),
        "reduce");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::allgatherBase(at::Tensor& userOutput, at::Tensor& userInput) {
  checkTensor(userInput, "input");
  checkWritable(userOutput, "output");
  checkSameType(userInput, userOutput, "output");
  TORCH_CHECK(userOutput.numel() == userInput.numel() * size_, "weft: allgather output has ",
              userOutput.numel(), " elements, expected ", size_, " x ", userInput.numel());
  Submission s;
  s.outputs = {userOutput};
  at::Tensor input = readable(userInput, "input", s);
  at::Tensor output = writable(userOutput, "output", false, s);
  const Moved m = movedAs(input);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  check(weftAllGatherAsync(input.data_ptr(), output.data_ptr(), m.count, m.type, comm_, &req),
        "allgather");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::allgather(std::vector<at::Tensor>& outputs, at::Tensor& input) {
  checkTensor(input, "input");
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_, "weft: allgather needs ", size_,
              " output tensors, got ", outputs.size());
  for (auto& o : outputs) {
    checkWritable(o, "allgather output");
    checkSameType(input, o, "allgather output");
    TORCH_CHECK(o.numel() == input.numel(), "weft: allgather outputs must match the input size");
  }
  at::Tensor staged = at::empty({input.numel() * size_}, input.options());
  Submission s = allgatherBase(staged, input);
  s.keepAlive.push_back(staged);
  s.outputs = outputs;
  s.finish = [outputs, staged, n = input.numel()]() {
    for (size_t i = 0; i < outputs.size(); ++i)
      copyInto(outputs[i],
               staged.narrow(0, static_cast<int64_t>(i) * n, n).view(outputs[i].sizes()));
  };
  return s;
}

Submission WeftComm::reduceScatterBase(at::Tensor& userOutput, at::Tensor& userInput,
                                       const c10d::ReduceOp& op) {
  checkTensor(userInput, "input");
  checkWritable(userOutput, "output");
  checkSameType(userInput, userOutput, "output");
  TORCH_CHECK(userInput.numel() == userOutput.numel() * size_, "weft: reduce_scatter input has ",
              userInput.numel(), " elements, expected ", size_, " x ", userOutput.numel());
  const Reduced r = reducedAs(userOutput, op);
  Submission s;
  s.outputs = {userOutput};
  at::Tensor input = readable(userInput, "input", s);
  at::Tensor output = writable(userOutput, "output", false, s);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  check(weftReduceScatterAsync(input.data_ptr(), output.data_ptr(), r.count, r.type,
                               CallOp(comm_, r).op(), comm_, &req),
        "reduce_scatter");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::reduceScatter(at::Tensor& output, std::vector<at::Tensor>& inputs,
                                   const c10d::ReduceOp& op) {
  checkTensor(output, "output");
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_, "weft: reduce_scatter needs ", size_,
              " input tensors, got ", inputs.size());
  std::vector<at::Tensor> flat;
  for (auto& in : inputs) {
    checkTensor(in, "reduce_scatter input");
    checkSameType(output, in, "reduce_scatter input");
    TORCH_CHECK(in.numel() == output.numel(), "weft: reduce_scatter inputs must match the output");
    flat.push_back(in.reshape({-1}));
  }
  at::Tensor staged = at::cat(flat);
  Submission s = reduceScatterBase(output, staged, op);
  s.keepAlive.push_back(staged);
  return s;
}

}  // namespace weft_torch
