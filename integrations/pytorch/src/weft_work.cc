// See weft_work.h.
#include "weft_work.h"

#include <c10/util/Exception.h>

#include <stdexcept>
#include <string>

namespace weft_torch {

WeftWork::WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                   std::chrono::milliseconds defaultTimeout)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      defaultTimeout_(defaultTimeout),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
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
    TORCH_CHECK(false, "weft: operation timed out after ", timeout.count(),
                " ms (a peer stopped calling collectives on this group?)");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> WeftWork::getFuture() { return future_; }

void WeftWork::complete(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    exception_ = error;
  }
  cv_.notify_all();
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

CompletionQueue::CompletionQueue() : thread_([this] { loop(); }) {}

CompletionQueue::~CompletionQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CompletionQueue::push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Entry{std::move(sub), std::move(works)});
  }
  cv_.notify_one();
}

// Waits for every request (each must be waited once, to be freed), keeps the
// first failure, and runs the copy-out only after a full success.
std::exception_ptr CompletionQueue::run(Submission& sub) {
  std::string failure;
  for (weftRequest_t& req : sub.requests) {
    if (req == nullptr) continue;
    weftResult_t rc = weftWait(&req);
    if (rc != weftSuccess && failure.empty()) {
      const char* why = weftGetLastError(nullptr);
      failure = std::string("weft: ") + weftGetErrorString(rc) + ": " +
                (why != nullptr && *why ? why : "no detail");
    }
  }
  if (!failure.empty()) return std::make_exception_ptr(std::runtime_error(failure));
  if (!sub.finish) return nullptr;
  try {
    sub.finish();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void CompletionQueue::loop() {
  for (;;) {
    Entry e;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is complete
      e = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error = run(e.sub);
    e.sub.keepAlive.clear();
    for (auto& w : e.works) w->complete(error);
  }
}

}  // namespace weft_torch
