// See weft_work.h.
#include "weft_work.h"

#include <c10/util/Exception.h>

#include "completion_queue.h"

namespace weft_torch {

WeftWork::WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                   std::chrono::milliseconds defaultTimeout,
                   const std::weak_ptr<CompletionState>& queue)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      defaultTimeout_(defaultTimeout),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
  // The Future's first callback, so it runs once the Future counts as complete
  // and before any of the user's. The Work completes there too, so a wait()
  // that returns finds the Future's value set. Then the completing thread hands
  // the rest of the queue on, since the user's callbacks may block on a later
  // call of the group. `this` is alive: only complete() triggers the callback.
  future_->addCallback([this, queue](c10::ivalue::Future&) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      completed_ = true;
    }
    cv_.notify_all();
    if (std::shared_ptr<CompletionState> state = queue.lock()) CompletionQueue::handOn(*state);
  });
}

bool WeftWork::isCompleted() {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

bool WeftWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ && !exception_;
}

std::exception_ptr WeftWork::exception() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exception_;
}

std::vector<at::Tensor> WeftWork::result() { return outputs_; }

bool WeftWork::wait(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = defaultTimeout_;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [this] { return completed_; })) {
    // Worded as gloo's and NCCL's timeouts, which user code matches on.
    TORCH_CHECK(false, "Timed out waiting ", timeout.count(),
                " ms for a weft operation to complete (the wait's timeout; a peer stopped calling "
                "collectives on this group?)");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> WeftWork::getFuture() { return future_; }

void WeftWork::complete(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    exception_ = error;  // completed_ is set by the Future's first callback
  }
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

int WeftWork::sourceRank() const {
  TORCH_CHECK(source_ != nullptr,
              "weft: sourceRank() is for the Work of a recv from any source (src=None)");
  TORCH_CHECK(*source_ >= 0, "weft: sourceRank() before the recv from any source completed");
  return *source_;
}

}  // namespace weft_torch
