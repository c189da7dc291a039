// Requests and the per-communicator progress thread. A non-blocking call
// becomes a request queued to the communicator's progress thread, which runs
// requests one at a time in call order. A blocking call runs inline on the
// caller's thread when nothing is queued (saving a thread hand-off, which
// costs more than a small collective on an oversubscribed machine), and
// otherwise queues behind the pending requests and waits, keeping call order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

struct weftRequest {
  std::function<weftResult_t()> work;
  // A group over several communicators completes when all of its parts do
  // (each part runs on its own communicator's progress thread).
  std::vector<weftRequest*> parts;
  std::atomic<bool> done{false};
  // Nobody waits for it (a call on a CUDA stream, whose stream waits instead):
  // the progress thread frees it after running it.
  bool detached = false;
  weftResult_t result = weftSuccess;
  std::string error;  // the sentence, copied from the progress thread
  std::mutex mu;
  std::condition_variable cv;
};

namespace weft {

class ProgressThread {
 public:
  ~ProgressThread();
  // CPUs to run the thread on once it starts (a list such as "0-5,48-53";
  // "" leaves it where the OS puts it).
  void setCpus(std::string cpus);
  // Queues `req`; the thread is started on first use.
  void submit(weftRequest* req);
  // True when no request is queued or running (call from the submitting thread).
  bool idle();
  // Runs what is queued to completion, then stops the thread.
  void stop();
  // Blocks until `req` (and all its parts) is done, spinning briefly first:
  // small collectives end soon.
  static void waitFor(weftRequest* req);
  static bool isDone(weftRequest* req);
  // The result of a finished request (the first failure among its parts), with
  // its sentence made this thread's last error; frees the request.
  static weftResult_t finish(weftRequest* req);

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<weftRequest*> queue_;
  // Atomics so that idle(), asked before every blocking call, takes no lock:
  // submitted_ is written by the submitting thread (under mu_), completed_ by
  // the progress thread after a request's work (release), so a caller that
  // sees them equal (acquire) also sees everything that work did.
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  bool stopping_ = false;
  std::string cpus_;
  std::thread thread_;
};

}  // namespace weft
