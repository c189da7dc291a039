// See weft_work.h.
#include "weft_work.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor_staging.h"
#include "weft_ops.h"

namespace weft_torch {

namespace {

// Every live group's completion state, for drainAll. Never destroyed: a
// detached completion thread may outlive static destruction.
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<CompletionState>> states;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

WeftWork::WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                   std::chrono::milliseconds defaultTimeout, std::weak_ptr<CompletionState> queue)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      defaultTimeout_(defaultTimeout),
      queue_(std::move(queue)),
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
  // A callback waiting (a synchronous collective inside `then`) would wait
  // for its own thread until the timeout.
  if (std::shared_ptr<CompletionState> queue = queue_.lock())
    CompletionQueue::completeInPlace(*queue, this);
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

CompletionQueue::CompletionQueue()
    : state_(std::make_shared<CompletionState>()), thread_([state = state_] { loop(state); }) {
  state_->worker = thread_.get_id();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto gone = [](const std::weak_ptr<CompletionState>& w) { return w.expired(); };
  r.states.erase(std::remove_if(r.states.begin(), r.states.end(), gone), r.states.end());
  r.states.push_back(state_);
}

CompletionQueue::~CompletionQueue() {
  if (std::this_thread::get_id() != thread_.get_id()) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->stopping = true;
    }
    state_->cv.notify_all();
    thread_.join();
    return;
  }
  // On the completion thread, inside a callback: nothing else can queue work
  // (the group is going), so what is queued is completed here, before the
  // communicator it waits on is destroyed.
  completeInPlace(*state_, nullptr);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  thread_.detach();  // it returns from the callback, finds `stopping` and ends
}

void CompletionQueue::push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->queue.push_back(Entry{std::move(sub), std::move(works)});
  }
  state_->cv.notify_one();
}

void CompletionQueue::completeInPlace(CompletionState& state, WeftWork* until) {
  if (std::this_thread::get_id() != state.worker) return;
  while (until == nullptr || !until->isCompleted()) {
    if (!settleOldest(state)) return;  // empty: `until` was never queued (an open batch)
  }
}

void CompletionQueue::drainAll() {
  std::vector<std::shared_ptr<CompletionState>> live;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& w : r.states) {
      if (std::shared_ptr<CompletionState> s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (const auto& s : live) {
    if (std::this_thread::get_id() == s->worker) {
      completeInPlace(*s, nullptr);
      continue;
    }
    std::unique_lock<std::mutex> lock(s->mu);
    s->idle.wait(lock, [&] { return s->queue.empty() && s->settling == 0; });
  }
}

bool CompletionQueue::settleOldest(CompletionState& state) {
  {
    Entry e;
    {
      std::lock_guard<std::mutex> lock(state.mu);
      if (state.queue.empty()) return false;
      e = std::move(state.queue.front());
      state.queue.pop_front();
      ++state.settling;
    }
    settle(e);
  }  // the entry's last references (tensors, Works) go before it counts as settled
  {
    std::lock_guard<std::mutex> lock(state.mu);
    --state.settling;
  }
  state.idle.notify_all();
  return true;
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
      failure = failureSentence(rc, "operation", why != nullptr && *why ? why : "no detail");
    }
  }
  if (!failure.empty()) return std::make_exception_ptr(std::runtime_error(failure));
  try {
    if (sub.finish) sub.finish();
    for (auto& [user, standIn] : sub.copyBack) copyInto(user, standIn);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void CompletionQueue::settle(Entry& entry) {
  std::exception_ptr error = run(entry.sub);
  entry.sub.keepAlive.clear();
  entry.sub.copyBack.clear();
  for (auto& w : entry.works) w->complete(error);
}

void CompletionQueue::loop(const std::shared_ptr<CompletionState>& state) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(state->mu);
      state->cv.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->queue.empty()) return;  // stopping, and everything is complete
    }
    settleOldest(*state);  // only this thread takes entries off the queue
  }
}

}  // namespace weft_torch
