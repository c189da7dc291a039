// Progress thread and request completion (see request.h).
#include "core/request.h"

#include <sched.h>

#include <chrono>

#include "base/error.h"
#include "base/log.h"
#include "topo/topology.h"

namespace weft {

ProgressThread::~ProgressThread() { stop(); }

void ProgressThread::setCpus(std::string cpus) {
  std::lock_guard<std::mutex> lock(mu_);
  cpus_ = std::move(cpus);
}

void ProgressThread::submit(weftRequest* req) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) {
    stopping_ = false;
    thread_ = std::thread([this] { loop(); });
  }
  queue_.push_back(req);
  submitted_.fetch_add(1, std::memory_order_relaxed);
  cv_.notify_one();
}

bool ProgressThread::idle() {
  return completed_.load(std::memory_order_acquire) == submitted_.load(std::memory_order_relaxed);
}

void ProgressThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void ProgressThread::loop() {
  std::string cpus;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cpus = cpus_;
  }
  if (!cpus.empty()) {
    if (topo::bindCurrentThreadToCpus(cpus) == weftSuccess)
      WEFT_INFO(INIT, "progress thread bound to CPUs %s", cpus.c_str());
    else
      WEFT_INFO(INIT, "progress thread left unbound: %s", lastError().c_str());
    clearError();
  }
  for (;;) {
    weftRequest* req = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping and drained
      req = queue_.front();
      queue_.pop_front();
    }
    clearError();
    weftResult_t r = req->work();
    {
      // Counted before `done` is published, so a caller that saw its last request
      // finish also sees the thread idle and may run the next call inline.
      std::lock_guard<std::mutex> lock(mu_);
      completed_.fetch_add(1, std::memory_order_release);
    }
    if (req->detached) {
      delete req;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(req->mu);
      req->result = r;
      if (r != weftSuccess) req->error = lastError();
      // Release: the waiter that sees done == true also sees result and error.
      req->done.store(true, std::memory_order_release);
      // Notified under the lock: the waiter takes req->mu before freeing req, so
      // it cannot free it while we still touch it.
      req->cv.notify_all();
    }
  }
}

bool ProgressThread::isDone(weftRequest* req) {
  for (weftRequest* part : req->parts)
    if (!part->done.load(std::memory_order_acquire)) return false;
  return req->parts.empty() ? req->done.load(std::memory_order_acquire) : true;
}

weftResult_t ProgressThread::finish(weftRequest* req) {
  weftResult_t result = weftSuccess;
  std::string error;
  auto take = [&](weftRequest* r) {
    // Taking the lock orders us after the progress thread's last touch of r.
    std::lock_guard<std::mutex> lock(r->mu);
    if (result == weftSuccess && r->result != weftSuccess) {
      result = r->result;
      error = r->error;
    }
  };
  if (req->parts.empty()) take(req);
  for (weftRequest* part : req->parts) {
    take(part);
    delete part;
  }
  delete req;
  return result == weftSuccess ? weftSuccess : setErrorString(result, error);
}

void ProgressThread::waitFor(weftRequest* req) {
  if (!req->parts.empty()) {
    for (weftRequest* part : req->parts) waitFor(part);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  while (!req->done.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() - start > std::chrono::microseconds(50)) {
      std::unique_lock<std::mutex> lock(req->mu);
      req->cv.wait(lock, [&] { return req->done.load(std::memory_order_acquire); });
      break;
    }
    sched_yield();
  }
}

}  // namespace weft
