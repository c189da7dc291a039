// The Work object the weft backend returns for each call. It is completed by
// the group's CompletionQueue (completion_queue.h); its Future is what
// DistributedDataParallel and communication hooks chain on.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <vector>

namespace weft_torch {

struct CompletionState;

class WeftWork : public c10d::Work {
 public:
  // `queue` is the group's completion state (the Work may outlive it).
  WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::chrono::milliseconds defaultTimeout, const std::weak_ptr<CompletionState>& queue);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // Blocks until done; `timeout` 0 (kNoTimeout) means the group's timeout.
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  // recv from any source: the sender (written by weft before completion).
  int sourceRank() const override;
  void setSource(std::shared_ptr<int> source) { source_ = std::move(source); }

  // Called once, by the thread that completes the group's queue. Runs the
  // Future's callbacks on that thread.
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  std::chrono::milliseconds defaultTimeout_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<int> source_;
};

}  // namespace weft_torch
