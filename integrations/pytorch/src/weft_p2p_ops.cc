// The torch operations that weft runs as fused groups of sends and receives
// (all-to-all with split sizes, gather, scatter, batch_isend_irecv), plus
// barrier and plain send/recv. A rank's own block is copied locally before the
// group starts; zero-sized blocks are skipped on both sides alike, since the
// sender's split for a peer is the receiver's split for the sender.
#include <c10/util/Exception.h>

#include "element_types.h"
#include "tensor_staging.h"
#include "weft_ops.h"

namespace weft_torch {
namespace {

// Sends or receives a whole tensor inside an open group; returns the first failure.
weftResult_t sendAll(const at::Tensor& t, int peer, weftComm_t comm) {
  if (t.numel() == 0) return weftSuccess;
  const Moved m = movedAs(t);
  return weftSend(t.data_ptr(), m.count, m.type, peer, comm, nullptr);
}
weftResult_t recvAll(const at::Tensor& t, int peer, weftComm_t comm) {
  if (t.numel() == 0) return weftSuccess;
  const Moved m = movedAs(t);
  return weftRecv(t.data_ptr(), m.count, m.type, peer, comm, nullptr);
}

}  // namespace

weftRequest_t WeftComm::runGroup(const char* what, const std::function<void()>& post) {
  weftGroupStart();
  try {
    post();
  } catch (...) {
    weftGroupEnd();  // closes the group; whatever was recorded runs (and may fail)
    throw;
  }
  weftRequest_t req = nullptr;
  weftResult_t rc = weftGroupEndAsync(&req);
  if (rc != weftSuccess) throwWeftError(rc, what);
  return req;
}

Submission WeftComm::alltoallBase(at::Tensor& userOutput, at::Tensor& userInput,
                                  const std::vector<int64_t>& outSplits,
                                  const std::vector<int64_t>& inSplits) {
  checkTensor(userInput, "alltoall input");
  checkWritable(userOutput, "alltoall output");
  TORCH_CHECK(userInput.scalar_type() == userOutput.scalar_type(),
              "weft: alltoall input and output dtypes differ");
  Submission s;
  s.outputs = {userOutput};
  at::Tensor input = readable(userInput, "alltoall input", s);
  at::Tensor output = writable(userOutput, "alltoall output", false, s);
  if (outSplits.empty() && inSplits.empty()) {
    TORCH_CHECK(input.numel() % size_ == 0 && output.numel() == input.numel(),
                "weft: alltoall without splits needs equal input and output sizes divisible by ",
                size_);
    const Moved m = movedAs(input);  // the whole tensor; each peer gets 1/size_ of it
    std::lock_guard<std::mutex> lock(mu_);
    weftRequest_t req = nullptr;
    weftResult_t rc = weftAllToAllAsync(input.data_ptr(), output.data_ptr(), m.count / size_,
                                        m.type, comm_, &req);
    if (rc != weftSuccess) throwWeftError(rc, "alltoall");
    s.requests.push_back(req);
    return s;
  }
  // Splits count rows along dim 0; an empty list means equal rows per peer.
  auto rowsOf = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* name) {
    int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    std::vector<int64_t> out = splits;
    if (out.empty()) {
      TORCH_CHECK(rows % size_ == 0, "weft: alltoall ", name, " rows not divisible by ", size_);
      out.assign(size_, rows / size_);
    }
    TORCH_CHECK(static_cast<int>(out.size()) == size_, "weft: alltoall ", name, " has ", out.size(),
                " split sizes for a group of ", size_);
    int64_t sum = 0;
    for (int64_t v : out) {
      TORCH_CHECK(v >= 0, "weft: alltoall ", name, " has a negative split size");
      sum += v;
    }
    TORCH_CHECK(sum == rows, "weft: alltoall ", name, " split sizes add up to ", sum,
                " but the tensor has ", rows, " rows");
    return out;
  };
  std::vector<int64_t> ins = rowsOf(input, inSplits, "input");
  std::vector<int64_t> outs = rowsOf(output, outSplits, "output");
  std::vector<at::Tensor> inBlocks, outBlocks;
  int64_t inOff = 0, outOff = 0;
  for (int p = 0; p < size_; ++p) {
    inBlocks.push_back(input.narrow(0, inOff, ins[p]));
    outBlocks.push_back(output.narrow(0, outOff, outs[p]));
    inOff += ins[p];
    outOff += outs[p];
  }
  TORCH_CHECK(inBlocks[rank_].numel() == outBlocks[rank_].numel(), "weft: alltoall sends ",
              inBlocks[rank_].numel(), " elements to itself but expects ",
              outBlocks[rank_].numel());
  copyInto(outBlocks[rank_], inBlocks[rank_]);
  std::lock_guard<std::mutex> lock(mu_);
  s.requests.push_back(runGroup("alltoall", [&]() {
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      if (sendAll(inBlocks[p], p, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "send");
      if (recvAll(outBlocks[p], p, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "recv");
    }
  }));
  return s;
}

Submission WeftComm::alltoall(std::vector<at::Tensor>& userOutputs,
                              std::vector<at::Tensor>& userInputs) {
  TORCH_CHECK(
      static_cast<int>(userOutputs.size()) == size_ && static_cast<int>(userInputs.size()) == size_,
      "weft: alltoall needs ", size_, " input and output tensors");
  Submission s;
  s.outputs = userOutputs;
  std::vector<at::Tensor> inputs, outputs;
  for (int p = 0; p < size_; ++p) {
    inputs.push_back(readable(userInputs[p], "alltoall input", s));
    outputs.push_back(writable(userOutputs[p], "alltoall output", false, s));
  }
  copyInto(outputs[rank_], inputs[rank_]);
  std::lock_guard<std::mutex> lock(mu_);
  s.requests.push_back(runGroup("alltoall", [&]() {
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      if (sendAll(inputs[p], p, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "send");
      if (recvAll(outputs[p], p, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "recv");
    }
  }));
  return s;
}

Submission WeftComm::gather(std::vector<at::Tensor>& userOutputs, at::Tensor& userInput, int root) {
  TORCH_CHECK(root >= 0 && root < size_, "weft: gather root ", root, " is out of range");
  Submission s;
  at::Tensor input = readable(userInput, "gather input", s);
  std::vector<at::Tensor> outputs;
  if (rank_ == root) {
    TORCH_CHECK(static_cast<int>(userOutputs.size()) == size_, "weft: gather needs ", size_,
                " output tensors on the root");
    for (auto& o : userOutputs) outputs.push_back(writable(o, "gather output", false, s));
    copyInto(outputs[rank_], input);
    s.outputs = userOutputs;
  }
  std::lock_guard<std::mutex> lock(mu_);
  s.requests.push_back(runGroup("gather", [&]() {
    if (rank_ != root) {
      if (sendAll(input, root, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "send");
      return;
    }
    for (int p = 0; p < size_; ++p)
      if (p != rank_ && recvAll(outputs[p], p, comm_) != weftSuccess)
        throwWeftError(weftInvalidUsage, "recv");
  }));
  return s;
}

Submission WeftComm::scatter(at::Tensor& userOutput, std::vector<at::Tensor>& userInputs,
                             int root) {
  TORCH_CHECK(root >= 0 && root < size_, "weft: scatter root ", root, " is out of range");
  Submission s;
  s.outputs = {userOutput};
  at::Tensor output = writable(userOutput, "scatter output", false, s);
  std::vector<at::Tensor> inputs;
  if (rank_ == root) {
    TORCH_CHECK(static_cast<int>(userInputs.size()) == size_, "weft: scatter needs ", size_,
                " input tensors on the root");
    for (auto& in : userInputs) inputs.push_back(readable(in, "scatter input", s));
    copyInto(output, inputs[rank_]);
  }
  std::lock_guard<std::mutex> lock(mu_);
  s.requests.push_back(runGroup("scatter", [&]() {
    if (rank_ != root) {
      if (recvAll(output, root, comm_) != weftSuccess) throwWeftError(weftInvalidUsage, "recv");
      return;
    }
    for (int p = 0; p < size_; ++p)
      if (p != rank_ && sendAll(inputs[p], p, comm_) != weftSuccess)
        throwWeftError(weftInvalidUsage, "send");
  }));
  return s;
}

Submission WeftComm::barrier() {
  Submission s;
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  weftResult_t rc = weftBarrierAsync(comm_, &req);
  if (rc != weftSuccess) throwWeftError(rc, "barrier");
  s.requests.push_back(req);
  return s;
}

Submission WeftComm::send(at::Tensor& t, int peer) { return pointToPoint(t, peer, true); }

Submission WeftComm::recv(at::Tensor& t, int peer) { return pointToPoint(t, peer, false); }

// Inside batch_isend_irecv the call is recorded into the open weft group (the
// batch's request covers it); otherwise it starts at once with its own request.
Submission WeftComm::pointToPoint(at::Tensor& user, int peer, bool isSend) {
  const char* what = isSend ? "send" : "recv";
  TORCH_CHECK(peer >= 0 && peer < size_ && peer != rank_, "weft: ", what, " peer ", peer,
              " is out of range or this rank");
  Submission s;
  s.outputs = {user};
  at::Tensor t =
      isSend ? readable(user, "send tensor", s) : writable(user, "recv tensor", false, s);
  std::lock_guard<std::mutex> lock(mu_);
  weftRequest_t req = nullptr;
  weftRequest_t* out = coalescing_ ? nullptr : &req;
  const Moved m = movedAs(t);
  weftResult_t rc;
  if (coalescing_) {
    rc = isSend ? weftSend(t.data_ptr(), m.count, m.type, peer, comm_, nullptr)
                : weftRecv(t.data_ptr(), m.count, m.type, peer, comm_, nullptr);
  } else {
    rc = isSend ? weftSendAsync(t.data_ptr(), m.count, m.type, peer, comm_, out)
                : weftRecvAsync(t.data_ptr(), m.count, m.type, peer, comm_, out);
  }
  if (rc != weftSuccess) throwWeftError(rc, what);
  if (req != nullptr) s.requests.push_back(req);
  return s;
}

Submission WeftComm::recvAny(at::Tensor& user) {
  Submission s;
  s.outputs = {user};
  s.source = std::make_shared<int>(-1);
  at::Tensor t = writable(user, "recv tensor", false, s);
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_,
              "weft: recv from any source cannot be in batch_isend_irecv (its peer is known "
              "only when it runs)");
  weftRequest_t req = nullptr;
  const Moved m = movedAs(t);
  const weftResult_t rc =
      weftRecvAnyAsync(t.data_ptr(), m.count, m.type, s.source.get(), comm_, &req);
  if (rc != weftSuccess) throwWeftError(rc, "recv from any source");
  s.requests.push_back(req);
  return s;
}

void WeftComm::beginCoalescing() {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_, "weft: coalescing is already open on this group");
  weftGroupStart();
  coalescing_ = true;
}

weftRequest_t WeftComm::endCoalescing() {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(coalescing_, "weft: endCoalescing without startCoalescing");
  coalescing_ = false;
  weftRequest_t req = nullptr;
  weftResult_t rc = weftGroupEndAsync(&req);
  if (rc != weftSuccess) throwWeftError(rc, "batch_isend_irecv");
  return req;
}

}  // namespace weft_torch
