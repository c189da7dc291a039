// Outstanding request handles (see request_handles.h).
#include "core/request_handles.h"

#include <mutex>
#include <unordered_set>

namespace weft {
namespace {

std::mutex& handlesMu() {
  static std::mutex mu;
  return mu;
}

// Never destroyed: a request may be completed by a thread that outlives
// static destruction at exit.
std::unordered_set<weftRequest*>& handles() {
  static auto* set = new std::unordered_set<weftRequest*>();
  return *set;
}

}  // namespace

weftRequest* handOutRequest(weftRequest* req) {
  std::lock_guard<std::mutex> lock(handlesMu());
  handles().insert(req);
  return req;
}

HandleState testRequestHandle(weftRequest* req) {
  std::lock_guard<std::mutex> lock(handlesMu());
  auto it = handles().find(req);
  if (it == handles().end()) return HandleState::kUnknown;
  if (!ProgressThread::isDone(req)) return HandleState::kRunning;
  handles().erase(it);
  return HandleState::kTaken;
}

bool takeRequestHandle(weftRequest* req) {
  std::lock_guard<std::mutex> lock(handlesMu());
  return handles().erase(req) == 1;
}

}  // namespace weft
