// The threads that complete one process group's Works, in call order.
//
// weft completes the requests of one communicator in call order, so one thread
// at a time (the one holding the group's "completer" role) takes the oldest
// entry, waits for its requests, runs its copy-out and marks its Works (and
// their Futures) complete. Marking a Future runs the user's callbacks on that
// thread, and a callback may block on a later call of the same group: torch's
// PowerSGD hook issues an allreduce inside a callback and waits for it in
// Future.wait(), which nothing in the backend can intercept. So the role is
// handed on as soon as a Future counts as complete, before the user's
// callbacks run (WeftWork registers the hand-on as each Future's first
// callback): another thread of the group's pool, woken or started when none is
// free, completes the rest of the queue while the callback runs, and the
// callback's thread rejoins the pool when it returns. Works are still marked
// strictly in call order: the next is marked only once the previous Future's
// completed flag is set. The pool grows only while callbacks block (one thread
// per blocked callback, plus one); it is kept until the group goes.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "weft_ops.h"
#include "weft_work.h"

namespace weft_torch {

// What a CompletionQueue and its threads share. Each thread holds its own
// reference, so it never touches a queue destroyed under it; Works hold a weak
// one, for the hand-on.
struct CompletionState : std::enable_shared_from_this<CompletionState> {
  struct Entry {
    Submission sub;
    std::vector<c10::intrusive_ptr<WeftWork>> works;
    bool ran = false;  // its requests were waited for and its copy-out run
    std::exception_ptr error;
    size_t marked = 0;  // how many of `works` were marked complete
  };
  std::mutex mu;
  std::condition_variable wake;   // free pool threads wait here for the role
  std::condition_variable quiet;  // teardown and drainAll wait here
  std::deque<Entry> queue;        // oldest first; stays at the front until all its Works are marked
  bool roleHeld = false;
  std::thread::id holder;  // the thread holding the role, while roleHeld
  int free = 0;            // pool threads waiting for the role, or starting
  int marking = 0;         // threads inside a Work's completion (its callbacks)
  bool stopping = false;
  std::vector<std::thread> threads;
};

class CompletionQueue {
 public:
  CompletionQueue();
  // Completes what is queued, then stops the pool. Called from a pool thread
  // (a Future callback dropped the group's last reference), it waits for the
  // other threads to finish the queue and leaves its own thread to end when
  // the callback returns.
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // Queues the submission; `works` complete when its requests have.
  void push(Submission sub, std::vector<c10::intrusive_ptr<WeftWork>> works);
  // For Works to hold.
  std::weak_ptr<CompletionState> state() const { return state_; }

  // Run by each Work's Future before the user's callbacks: the thread that
  // marked it lets go of the role, and a free thread takes it if work is left.
  static void handOn(CompletionState& state);

  // Waits until every group's queue is empty and no callback of it is running.
  // Called at interpreter exit (atexit, before Python finalizes) without the
  // GIL: a script that ends with work in flight would otherwise have its
  // Future callbacks run on a finalizing interpreter, which ends the thread
  // mid-callback and aborts the process. Each entry's wait is bounded by
  // weft's own timeout.
  static void drainAll();

 private:
  using Entry = CompletionState::Entry;
  using Lock = std::unique_lock<std::mutex>;
  static void loop(const std::shared_ptr<CompletionState>& state);
  // With the role held by this thread: completes entries until the queue is
  // empty or the role went to another thread.
  static void serve(CompletionState& state, Lock& lock);
  // Marks the oldest entry's next Work; the hand-on lets go of the role.
  static void markNext(CompletionState& state, Lock& lock);
  // Makes sure a pool thread will look for the role: wakes a free one, or
  // starts one. False if no thread could be started.
  static bool summon(CompletionState& state);
  // Until the queue is empty and only `self` callbacks are running.
  static void waitQuiet(CompletionState& state, Lock& lock);
  static std::exception_ptr run(Submission& sub);

  std::shared_ptr<CompletionState> state_;
};

}  // namespace weft_torch
