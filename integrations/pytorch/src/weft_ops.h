// The weft side of the PyTorch plugin, independent of the torch version: a
// communicator built from a c10d::Store, and one function per collective that
// checks the tensors, starts the operation on weft's non-blocking API and
// returns a Submission (the weft requests to wait for and the copy-out to run
// after them). Only the adapter (process_group_weft.*) knows whether torch
// calls this a ProcessGroup (1.x) or a Backend (2.x).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace weft_torch {

// What one torch call started. `requests` complete in order (one communicator);
// `finish` runs once all of them succeeded (copies from staging into the
// caller's tensors), then each `copyBack` pair is copied (caller's tensor <-
// its contiguous stand-in, tensor_staging.h); `outputs` become the Work's
// result and Future value; `keepAlive` holds staging tensors until then.
struct Submission {
  std::vector<weftRequest_t> requests;
  std::function<void()> finish;
  std::vector<std::pair<at::Tensor, at::Tensor>> copyBack;
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> keepAlive;
  std::shared_ptr<int> source;  // recv from any source: the sender, once complete

  // Takes over `other`'s staging and copy-backs, when one request (a batch,
  // a coalesced call) completes several submissions' work.
  void absorbStaging(Submission& other) {
    for (auto& t : other.keepAlive) keepAlive.push_back(std::move(t));
    for (auto& c : other.copyBack) copyBack.push_back(std::move(c));
    other.keepAlive.clear();
    other.copyBack.clear();
  }
};

// Throws c10::Error (a Python RuntimeError) carrying weft's sentence.
[[noreturn]] void throwWeftError(weftResult_t rc, const char* what);
// The sentence of a failed call: a timeout is worded as gloo's and NCCL's
// are ("Timed out ...", "timeout"), which user code and torch's tests match on.
std::string failureSentence(weftResult_t rc, const char* what, const std::string& why);

// A weft communicator for one process group. Calls from several threads
// (the main thread, autograd threads of DistributedDataParallel) are
// serialised here, because weft wants one caller per communicator at a time.
class WeftComm {
 public:
  // Rank 0 publishes a fresh unique id under `key` in the store; the others
  // read it (the store's own timeout bounds that wait).
  WeftComm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size);
  // Takes a communicator made elsewhere (from the environment, a standby's,
  // a replacement: recovery.h); destroys it at the end.
  explicit WeftComm(weftComm_t adopted);
  ~WeftComm();
  WeftComm(const WeftComm&) = delete;
  WeftComm& operator=(const WeftComm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  weftComm_t handle() const { return comm_; }
  // Held around any call on handle() made outside this class, as its own are.
  std::mutex& callMutex() { return mu_; }

  Submission allreduce(at::Tensor& t, const c10d::ReduceOp& op);
  // A sparse COO tensor (weft_sparse_ops.cc): SUM only; blocks for one
  // exchange of the ranks' entry counts before it returns.
  Submission allreduceSparse(at::Tensor& t, const c10d::ReduceOp& op);
  Submission allreduceCoalesced(std::vector<at::Tensor>& ts, const c10d::ReduceOp& op);
  Submission broadcast(at::Tensor& t, int root);
  Submission reduce(at::Tensor& t, int root, const c10d::ReduceOp& op);
  Submission allgather(std::vector<at::Tensor>& outputs, at::Tensor& input);
  Submission allgatherBase(at::Tensor& output, at::Tensor& input);
  Submission reduceScatter(at::Tensor& output, std::vector<at::Tensor>& inputs,
                           const c10d::ReduceOp& op);
  Submission reduceScatterBase(at::Tensor& output, at::Tensor& input, const c10d::ReduceOp& op);
  Submission alltoallBase(at::Tensor& output, at::Tensor& input,
                          const std::vector<int64_t>& outSplits,
                          const std::vector<int64_t>& inSplits);
  Submission alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs);
  Submission gather(std::vector<at::Tensor>& outputs, at::Tensor& input, int root);
  Submission scatter(at::Tensor& output, std::vector<at::Tensor>& inputs, int root);
  Submission barrier();
  Submission send(at::Tensor& t, int peer);
  Submission recv(at::Tensor& t, int peer);
  // recv(src=None): weftRecvAnyAsync; Submission::source names the sender.
  Submission recvAny(at::Tensor& t);

  // batch_isend_irecv: sends and receives between begin and end are fused
  // into one weft group (so exchanges of large messages cannot deadlock).
  void beginCoalescing();
  bool coalescing() const { return coalescing_; }
  weftRequest_t endCoalescing();

 private:
  // Runs the p2p calls made by `post` as one weft group; returns its request.
  weftRequest_t runGroup(const char* what, const std::function<void()>& post);
  // send/recv: one path for both directions.
  Submission pointToPoint(at::Tensor& t, int peer, bool isSend);

  std::mutex mu_;
  weftComm_t comm_ = nullptr;
  int rank_;
  int size_;
  bool coalescing_ = false;
};

}  // namespace weft_torch
