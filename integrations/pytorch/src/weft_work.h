// Work objects for the weft backend and the one thread per process group that
// completes them. weft completes the requests of one communicator in call
// order, so a FIFO and a single waiter suffice: the thread waits for the
// oldest entry's requests, runs its copy-out, then marks its Works (and their
// Futures, which DistributedDataParallel chains on) complete. Future callbacks
// run on this thread; it holds no lock while they run, so a callback may issue
// further collectives, and may even wait for them: Work::wait called on this
// thread completes the queue up to that Work in place, since the thread that
// would otherwise complete it is the one waiting.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "weft_ops.h"

namespace weft_torch {

struct CompletionState;

class WeftWork : public c10d::Work {
 public:
  // `queue` is the group's completion queue (the Work may outlive it).
  WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::chrono::milliseconds defaultTimeout, std::weak_ptr<CompletionState> queue);

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
  std::weak_ptr<CompletionState> queue_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// What a CompletionQueue and its thread share. The thread holds its own
// reference, so it never touches a queue destroyed under it; Works hold a weak
// one, to complete the queue in place when waited on from its thread.
struct CompletionState {
  struct Entry {
    Submission sub;
    std::vector<c10::intrusive_ptr<WeftWork>> works;
  };
  std::mutex mu;
  std::condition_variable cv;    // the thread waits here for entries
  std::condition_variable idle;  // drainAll waits here for the queue to empty
  std::deque<Entry> queue;
  int settling = 0;  // entries taken off `queue` whose Works are not yet complete
  bool stopping = false;
  std::thread::id worker;  // the completion thread; set before any Work exists
};

class CompletionQueue {
 public:
  CompletionQueue();
  // Completes what is queued, then stops the thread. Called from that thread
  // itself (a Future callback dropped the group's last reference), it cannot
  // join it: it completes the rest of the queue in place and lets the thread
  // run out on its own reference to the shared state.
  ~CompletionQueue();

  // Queues the submission; `works` complete when its requests have.
  void push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works);
  // For Works to hold.
  std::weak_ptr<CompletionState> state() const { return state_; }

  // On the completion thread only (else nothing): completes queued entries
  // here, oldest first, until `until` is complete (nullptr: the queue is
  // empty). Entries still complete one at a time and in order.
  static void completeInPlace(CompletionState& state, WeftWork* until);

  // Waits until every group's queue is empty and settled. Called at
  // interpreter exit (atexit, before Python finalizes) without the GIL: a
  // script that ends with work in flight would otherwise have its Future
  // callbacks run on a finalizing interpreter, which ends the completion
  // thread mid-callback and aborts the process. Each entry's wait is bounded by
  // weft's own timeout.
  static void drainAll();

 private:
  using Entry = CompletionState::Entry;
  static void loop(const std::shared_ptr<CompletionState>& state);
  // Takes the oldest entry and settles it; false if the queue was empty.
  static bool settleOldest(CompletionState& state);
  // Waits for the entry's requests, then completes its Works.
  static void settle(Entry& entry);
  static std::exception_ptr run(Submission& sub);

  std::shared_ptr<CompletionState> state_;
  std::thread thread_;  // after state_: it starts with a copy of it
};

}  // namespace weft_torch
