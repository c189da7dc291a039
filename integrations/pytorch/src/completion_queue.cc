// See completion_queue.h.
#include "completion_queue.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <system_error>

#include "tensor_staging.h"

namespace weft_torch {

namespace {

// Every live group's completion state, for drainAll. Never destroyed: a
// detached pool thread may outlive static destruction.
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<CompletionState>> states;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// The group whose pool this thread belongs to (nullptr on other threads):
// teardown or drainAll called from one of its callbacks must not wait for the
// callback it is part of.
thread_local const CompletionState* tlsPool = nullptr;

}  // namespace

CompletionQueue::CompletionQueue() : state_(std::make_shared<CompletionState>()) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    summon(*state_);  // ready before the first call; push starts one if this failed
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto gone = [](const std::weak_ptr<CompletionState>& w) { return w.expired(); };
  r.states.erase(std::remove_if(r.states.begin(), r.states.end(), gone), r.states.end());
  r.states.push_back(state_);
}

CompletionQueue::~CompletionQueue() {
  std::vector<std::thread> threads;
  {
    Lock lock(state_->mu);
    waitQuiet(*state_, lock);  // every queued Work completes before the communicator goes
    state_->stopping = true;
    threads.swap(state_->threads);
  }
  state_->wake.notify_all();
  for (std::thread& t : threads) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // inside a callback: the thread ends on its own reference when it returns
    } else {
      t.join();
    }
  }
}

void CompletionQueue::push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works) {
  std::lock_guard<std::mutex> lock(state_->mu);
  TORCH_CHECK(state_->roleHeld || summon(*state_),
              "weft: could not start a thread to complete the group's calls");
  Entry e;
  e.sub = std::move(sub);
  e.works = std::move(works);
  state_->queue.push_back(std::move(e));
}

void CompletionQueue::handOn(CompletionState& state) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (!state.roleHeld || state.holder != std::this_thread::get_id()) return;
  if (!state.queue.empty() && !summon(state)) return;  // nobody to take over: keep it
  state.roleHeld = false;
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
    Lock lock(s->mu);
    waitQuiet(*s, lock);
  }
}

void CompletionQueue::waitQuiet(CompletionState& state, Lock& lock) {
  // The hand-on could not start a thread, so this one still holds the role:
  // nobody else will complete the queue.
  if (state.roleHeld && state.holder == std::this_thread::get_id()) serve(state, lock);
  const int self = tlsPool == &state ? 1 : 0;  // a pool thread runs user code only in a callback
  state.quiet.wait(lock,
                   [&] { return state.queue.empty() && !state.roleHeld && state.marking == self; });
}

bool CompletionQueue::summon(CompletionState& state) {
  if (state.free > 0) {
    state.wake.notify_one();
    return true;
  }
  try {
    state.threads.emplace_back([s = state.shared_from_this()] { loop(s); });
  } catch (const std::system_error&) {
    return false;
  }
  ++state.free;  // counted from its start: it looks for the role before it first sleeps
  return true;
}

void CompletionQueue::loop(const std::shared_ptr<CompletionState>& state) {
  tlsPool = state.get();
  CompletionState& s = *state;
  Lock lock(s.mu);
  for (;;) {
    s.wake.wait(lock, [&] { return s.stopping || (!s.roleHeld && !s.queue.empty()); });
    --s.free;
    if (s.roleHeld || s.queue.empty()) return;  // stopping, and everything is complete
    s.roleHeld = true;
    s.holder = std::this_thread::get_id();
    serve(s, lock);
    ++s.free;
  }
}

void CompletionQueue::serve(CompletionState& state, Lock& lock) {
  while (state.roleHeld && state.holder == std::this_thread::get_id()) {
    if (state.queue.empty()) {
      state.roleHeld = false;
      state.quiet.notify_all();
      return;
    }
    Entry& e = state.queue.front();  // a reference stays valid while others push_back
    if (e.ran) {
      markNext(state, lock);
      continue;
    }
    lock.unlock();  // only the role's holder touches the oldest entry
    e.error = run(e.sub);
    e.sub = Submission();  // staging and copy-backs go before the Works complete
    lock.lock();
    e.ran = true;
  }
}

void CompletionQueue::markNext(CompletionState& state, Lock& lock) {
  Entry& e = state.queue.front();
  c10::intrusive_ptr<WeftWork> work;
  if (e.marked < e.works.size()) work = e.works[e.marked++];
  const std::exception_ptr error = e.error;
  Entry done;
  if (e.marked == e.works.size()) {
    done = std::move(e);
    state.queue.pop_front();
  }
  ++state.marking;
  lock.unlock();
  try {
    if (work) work->complete(error);  // its Future's first callback hands the role on
  } catch (...) {
    // A callback's exception belongs to that callback; the queue goes on.
  }
  work.reset();
  done = Entry();  // the entry's last references (tensors, Works) go while still counted
  lock.lock();
  --state.marking;
  state.quiet.notify_all();
  // Back from the callbacks: take the role again if it is free and work is left.
  if (!state.roleHeld && !state.queue.empty()) {
    state.roleHeld = true;
    state.holder = std::this_thread::get_id();
  }
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

}  // namespace weft_torch
