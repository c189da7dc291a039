// A DeviceRuntime for tests that forwards to the fake CUDA (src/device/
// fake_runtime.h), counts what weft asks of it (pointer classifications,
// pinned allocations and frees, in all and on one watched thread) and fails
// on demand (the next pinned allocations, every enqueue on one stream, or one
// enqueue after a given number of them), so that tests can see how often the
// stream path classifies, whether staging is freed, on which thread, and what
// a failed enqueue leaves behind. With `ring` set it offers the fake's GPU
// ring too (otherwise communicators stage every call on a stream).
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "base/device_runtime.h"
#include "base/error.h"
#include "device/fake_runtime.h"

namespace weft_test {

class SpyRuntime : public weft::DeviceRuntime {
 public:
  std::atomic<int> classifies{0};
  std::atomic<int> pinnedAllocs{0};
  std::atomic<int> pinnedFrees{0};
  // Pinned allocations still to succeed before they fail (-1: never fail).
  std::atomic<int> allocsBeforeFailure{-1};
  // Every enqueue on this stream fails (nullptr: none does).
  std::atomic<void*> failingStream{nullptr};
  // Enqueues (on any stream) still to succeed before one fails; the ones
  // after it succeed again (-1: none fails).
  std::atomic<int> enqueuesBeforeOneFailure{-1};
  // Pinned allocations and frees made on `watched` (a test's own thread).
  std::atomic<std::thread::id> watched{};
  std::atomic<int> pinnedAllocsWatched{0};
  std::atomic<int> pinnedFreesWatched{0};
  std::atomic<bool> ring{false};
  std::atomic<int> ringThreads{0};  // threads per CTA of the last ring launch
  std::atomic<int> ringCtas{0};     // CTAs of the last ring launch

  void reset() {
    classifies = 0;
    pinnedAllocs = 0;
    pinnedFrees = 0;
    allocsBeforeFailure = -1;
    failingStream = nullptr;
    enqueuesBeforeOneFailure = -1;
    watched = std::thread::id();
    pinnedAllocsWatched = 0;
    pinnedFreesWatched = 0;
    ring = false;
    ringThreads = 0;
    ringCtas = 0;
  }
  int pinnedLive() const { return pinnedAllocs.load() - pinnedFrees.load(); }

  std::string whyUnusable() override { return fake().whyUnusable(); }
  std::string streamProblem(void* stream) override { return fake().streamProblem(stream); }
  bool mayHaveDeviceMemory() override { return fake().mayHaveDeviceMemory(); }
  weftResult_t classify(const void* ptr, weft::PointerInfo* info) override {
    ++classifies;
    return fake().classify(ptr, info);
  }
  weftResult_t allocPinned(size_t bytes, void** ptr) override {
    if (allocsBeforeFailure.load() == 0)
      return weft::setError(weftSystemError, "spy runtime: pinned allocation refused");
    if (allocsBeforeFailure.load() > 0) --allocsBeforeFailure;
    weftResult_t r = fake().allocPinned(bytes, ptr);
    if (r == weftSuccess) ++pinnedAllocs;
    if (r == weftSuccess && std::this_thread::get_id() == watched.load()) ++pinnedAllocsWatched;
    return r;
  }
  void freePinned(void* ptr) override {
    ++pinnedFrees;
    if (std::this_thread::get_id() == watched.load()) ++pinnedFreesWatched;
    fake().freePinned(ptr);
  }
  weftResult_t beginEnqueue(int device, int* saved) override {
    return fake().beginEnqueue(device, saved);
  }
  void endEnqueue(int saved) override { fake().endEnqueue(saved); }
  weftResult_t copyAsync(void* dst, const void* src, size_t bytes, void* stream) override {
    if (refuseThis(stream)) return refused();
    return fake().copyAsync(dst, src, bytes, stream);
  }
  weftResult_t writeFlagAsync(uint32_t* flag, uint32_t value, void* stream) override {
    if (refuseThis(stream)) return refused();
    return fake().writeFlagAsync(flag, value, stream);
  }
  weftResult_t waitFlagAsync(const uint32_t* flag, uint32_t value, void* stream) override {
    if (refuseThis(stream)) return refused();
    return fake().waitFlagAsync(flag, value, stream);
  }

  // One per process, never destroyed (like the runtimes it stands for: a
  // staging block may be freed through it after a test's communicator is gone).
  static SpyRuntime* instance() {
    static auto* spy = new SpyRuntime();
    return spy;
  }

 private:
  bool refuseThis(void* stream) {
    if (stream == failingStream.load()) return true;
    int left = enqueuesBeforeOneFailure.load();
    if (left < 0) return false;
    enqueuesBeforeOneFailure = left - 1;
    return left == 0;
  }
  static weftResult_t refused() {
    return weft::setError(weftUnhandledCudaError, "spy runtime: enqueue on this stream refused");
  }
  static weft::DeviceRuntime& fake() { return *weft::fake::runtime(); }

 public:
  // The GPU ring, forwarded to the fake's when `ring` is set.
  std::string whyNoRing() override {
    return ring.load() ? fake().whyNoRing() : "the spy runtime offers no ring unless asked";
  }
  std::string gpuName(int device) override { return fake().gpuName(device); }
  weftResult_t currentDevice(int* device) override { return fake().currentDevice(device); }
  weftResult_t prepareKernels(int device) override { return fake().prepareKernels(device); }
  weftResult_t allocDevice(int device, size_t bytes, void** ptr,
                           weft::GpuExport* exported) override {
    return fake().allocDevice(device, bytes, ptr, exported);
  }
  void freeDevice(void* ptr) override { fake().freeDevice(ptr); }
  weftResult_t openPeer(int device, const weft::GpuExport& peer, void** ptr) override {
    return fake().openPeer(device, peer, ptr);
  }
  void closePeer(void* ptr) override { fake().closePeer(ptr); }
  weftResult_t deviceAddress(const void* ptr, const void** out) override {
    return fake().deviceAddress(ptr, out);
  }
  weft::NicAccess nicAccess(void* ptr, size_t bytes) override {
    return fake().nicAccess(ptr, bytes);
  }
  bool gdrForced() override { return fake().gdrForced(); }
  weftResult_t launchRing(weftDataType_t type, weftRedOp_t op, weft::dev::RingCall* call, int nctas,
                          int threads, void* stream) override {
    if (refuseThis(stream)) return refused();
    ringThreads = threads;
    ringCtas = nctas;
    return fake().launchRing(type, op, call, nctas, threads, stream);
  }
};

}  // namespace weft_test
