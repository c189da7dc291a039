// Fake streams and the fake DeviceRuntime for tests (fake_runtime.h). A
// stream is a worker thread running queued operations one at a time, in
// order, as a CUDA stream does. Flag operations follow the memory-ordering
// contract of device_runtime.h: a flag write is a release store made after
// every earlier operation of the stream completed (so whoever acquires the
// flag sees what those copies wrote), and a flag wait acquires, so the
// operations after it see what the host wrote before raising the flag.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "base/error.h"
#include "device/fake_runtime.h"

namespace weft {
namespace fake {
namespace {

std::atomic<bool> peerAccessRefused{false};  // refusePeerAccess
std::atomic<bool> gdrAllowed{false};         // allowGdr
constexpr int kFakeDevices = 8;
thread_local int currentFakeDevice = 0;  // this thread's "cudaSetDevice"

class Stream {
 public:
  Stream() : thread_([this] { loop(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      stalled_ = false;
      cv_.notify_all();
    }
    thread_.join();
  }
  void enqueue(std::function<void()> op) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(op));
    ++enqueued_;
    cv_.notify_all();
  }
  void sync() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = enqueued_;
    idle_.wait(lock, [&] { return done_ >= target; });
  }
  void stall(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = on;
    cv_.notify_all();
  }
  uint64_t opsDone() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> op;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || (!stalled_ && !queue_.empty()); });
        if (queue_.empty() || (stopping_ && stalled_)) return;
        op = std::move(queue_.front());
        queue_.pop_front();
      }
      op();
      std::lock_guard<std::mutex> lock(mu_);
      ++done_;
      idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<void()>> queue_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stalled_ = false, stopping_ = false;
  std::thread thread_;
};

std::mutex streamsMu;
std::set<void*>& streams() {
  static auto* s = new std::set<void*>();
  return *s;
}

Stream* asStream(void* handle) { return static_cast<Stream*>(handle); }

class FakeRuntime : public DeviceRuntime {
 public:
  std::string whyUnusable() override { return ""; }
  std::string streamProblem(void* stream) override {
    std::lock_guard<std::mutex> lock(streamsMu);
    return streams().count(stream) != 0 ? "" : "it is not a stream of the fake runtime";
  }
  bool mayHaveDeviceMemory() override { return anyFakeDeviceMemory(); }
  weftResult_t classify(const void* ptr, PointerInfo* info) override {
    return classifyFake(ptr, info);
  }
  weftResult_t allocPinned(size_t bytes, void** ptr) override {
    *ptr = pinnedAlloc(bytes);
    return weftSuccess;
  }
  void freePinned(void* ptr) override { memFree(ptr); }
  // A current device per thread, as CUDA keeps it (0 in a new thread), on
  // kFakeDevices fake GPUs; beginEnqueue selects it like cudaSetDevice.
  weftResult_t beginEnqueue(int device, int* saved) override {
    *saved = -1;
    if (device < 0 || device == currentFakeDevice) return weftSuccess;
    if (device >= kFakeDevices)
      return setError(weftUnhandledCudaError, "cudaSetDevice(%d) failed: invalid device ordinal",
                      device);
    *saved = currentFakeDevice;
    currentFakeDevice = device;
    return weftSuccess;
  }
  void endEnqueue(int saved) override {
    if (saved >= 0) currentFakeDevice = saved;
  }
  weftResult_t copyAsync(void* dst, const void* src, size_t bytes, void* stream) override {
    asStream(stream)->enqueue([dst, src, bytes] {
      if (bytes > 0) std::memcpy(accessible(dst, bytes), accessible(src, bytes), bytes);
    });
    return weftSuccess;
  }
  weftResult_t writeFlagAsync(uint32_t* flag, uint32_t value, void* stream) override {
    asStream(stream)->enqueue([flag, value] { __atomic_store_n(flag, value, __ATOMIC_RELEASE); });
    return weftSuccess;
  }
  weftResult_t waitFlagAsync(const uint32_t* flag, uint32_t value, void* stream) override {
    asStream(stream)->enqueue([flag, value] {
      // Polls like a GPU front end would; sleeps so that a long wait costs no CPU.
      for (int i = 0; !flagReached(__atomic_load_n(flag, __ATOMIC_ACQUIRE), value); ++i) {
        if (i < 100)
          sched_yield();
        else
          usleep(50);
      }
    });
    return weftSuccess;
  }

  // The ring: fake device memory shared through memfds, and the schedule run
  // by host threads (fake_kernel.cc) as one stream operation.
  std::string whyNoRing() override { return ""; }
  // Test hook: WEFT_TEST_FAKE_GPU names this process's fake GPU. The same
  // name in every process makes them share one GPU, as on a real one-GPU
  // machine; unset, the fake GPU has no name and is shared with no one.
  std::string gpuName(int) override {
    const char* name = std::getenv("WEFT_TEST_FAKE_GPU");
    return name != nullptr ? name : "";
  }
  weftResult_t currentDevice(int* device) override {
    *device = currentFakeDevice;
    return weftSuccess;
  }
  weftResult_t allocDevice(int device, size_t bytes, void** ptr, GpuExport* exported) override {
    *ptr = deviceAlloc(bytes, device);
    deviceMemset(*ptr, 0, bytes);
    exportMemory(*ptr, exported);
    return weftSuccess;
  }
  void freeDevice(void* ptr) override { memFree(ptr); }
  weftResult_t openPeer(int, const GpuExport& peer, void** ptr) override {
    if (peerAccessRefused.load(std::memory_order_relaxed))
      return setError(weftUnhandledCudaError,
                      "peer access to process %llu's GPU is not supported (the fake refuses it)",
                      static_cast<unsigned long long>(peer.pid));
    *ptr = openMemory(peer);
    if (*ptr != nullptr) return weftSuccess;
    return setError(weftSystemError, "the fake could not open process %llu's device memory",
                    static_cast<unsigned long long>(peer.pid));
  }
  void closePeer(void* ptr) override { closeMemory(ptr); }
  weftResult_t deviceAddress(const void* ptr, const void** out) override {
    *out = ptr;  // unified addressing
    return weftSuccess;
  }
  // First the memfd in place of a dma-buf (a real dma-buf exporter it is
  // not, so ibv_reg_dmabuf_mr refuses it and the fallback is exercised), then
  // the read-write view for ibv_reg_mr: the host proxy only ever computes
  // addresses in it, so the PROT_NONE view still catches a host access.
  NicAccess nicAccess(void* ptr, size_t bytes) override {
    NicAccess out;
    out.dmabufFd = dupMemoryFile(ptr, &out.dmabufOffset);
    out.address = accessible(ptr, bytes);
    out.addressVia = "the fake runtime's read-write view";
    return out;
  }
  bool gdrForced() override { return gdrAllowed.load(std::memory_order_relaxed); }
  // One host thread per CTA, whatever `threads` says (the kernel's loops
  // take any lane count: LaneCopy.* and RingCall.EveryKindWithBlockLanes).
  weftResult_t launchRing(weftDataType_t type, weftRedOp_t op, dev::RingCall* call, int nctas,
                          int /*threads*/, void* stream) override {
    asStream(stream)->enqueue([type, op, call, nctas] { runRingKernel(type, op, call, nctas); });
    return weftSuccess;
  }
};

}  // namespace

DeviceRuntime* runtime() {
  static FakeRuntime* rt = new FakeRuntime();  // never destroyed: streams may outlive main
  return rt;
}

void* streamCreate() {
  auto* s = new Stream();
  std::lock_guard<std::mutex> lock(streamsMu);
  streams().insert(s);
  return s;
}

void streamDestroy(void* stream) {
  {
    std::lock_guard<std::mutex> lock(streamsMu);
    streams().erase(stream);
  }
  asStream(stream)->sync();
  delete asStream(stream);
}

void refusePeerAccess() { peerAccessRefused.store(true, std::memory_order_relaxed); }
void allowGdr() { gdrAllowed.store(true, std::memory_order_relaxed); }

void streamSync(void* stream) { asStream(stream)->sync(); }
void streamStall(void* stream) { asStream(stream)->stall(true); }
void streamResume(void* stream) { asStream(stream)->stall(false); }
uint64_t streamOpsDone(void* stream) { return asStream(stream)->opsDone(); }

void streamEnqueueHost(void* stream, void (*fn)(void*), void* arg) {
  asStream(stream)->enqueue([fn, arg] { fn(arg); });
}

}  // namespace fake
}  // namespace weft
