// A program for the test of perf/name_stacks.sh (tests/unit/CMakeLists.txt:
// gpu_check.stack_names): it installs the GPU checks' stack dumper
// (tests/gpu/thread_stacks.h) and leaves one thread waiting forever in
// waitForever, the frame whose name the test looks for after SIGUSR1.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/gpu/thread_stacks.h"

namespace {

const bool kStacks = gpu_test::installStackDumper();

__attribute__((noinline)) void waitForever(std::mutex& mu, std::condition_variable& cv) {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [] { return false; });
}

}  // namespace

int main() {
  if (!kStacks) return 2;
  std::mutex mu;
  std::condition_variable cv;
  std::thread waiter([&] { waitForever(mu, cv); });
  waiter.join();  // never returns: the test stops the program
  return 0;
}
