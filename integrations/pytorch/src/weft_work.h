// Work objects for the weft backend and the one thread per process group that
// completes them. weft completes the requests of one communicator in call
// order, so a FIFO and a single waiter suffice: the thread waits for the
// oldest entry's requests, runs its copy-out, then marks its Works (and their
// Futures, which DistributedDataParallel chains on) complete. Future callbacks
// run on this thread; it holds no lock while they run, so a callback may issue
// further collectives.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "weft_ops.h"

namespace weft_torch {

class WeftWork : public c10d::Work {
 public:
  WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::chrono::milliseconds defaultTimeout);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // Blocks until done; `timeout` 0 (kNoTimeout) means the group's timeout.
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // Called once by the completion thread.
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  std::chrono::milliseconds defaultTimeout_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class CompletionQueue {
 public:
  CompletionQueue();
  ~CompletionQueue();  // completes what is queued, then stops the thread

  // Queues the submission; `works` complete when its requests have.
  void push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works);

 private:
  struct Entry {
    Submission sub;
    std::vector<c10::intrusive_ptr<WeftWork>> works;
  };
  void loop();
  static std::exception_ptr run(Submission& sub);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace weft_torch
