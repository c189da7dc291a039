// Which DeviceRuntime weft uses (device_runtime.h), and the runtime of builds
// without CUDA: every pointer is host memory and no stream can be used.
#include "base/device_runtime.h"

#include <atomic>

#include "base/error.h"

namespace weft {

#ifdef WEFT_HAVE_CUDA
DeviceRuntime* cudaDeviceRuntime();  // cuda_runtime.cc
#endif

namespace {

class NoDeviceRuntime : public DeviceRuntime {
 public:
  std::string whyUnusable() override { return "this weft build has no CUDA"; }
  std::string streamProblem(void*) override { return "this weft build has no CUDA"; }
  bool mayHaveDeviceMemory() override { return false; }
  weftResult_t classify(const void*, PointerInfo* info) override {
    *info = PointerInfo();
    return weftSuccess;
  }
  weftResult_t allocPinned(size_t, void**) override { return unusable("allocPinned"); }
  void freePinned(void*) override {}
  weftResult_t beginEnqueue(int, int*) override { return unusable("beginEnqueue"); }
  void endEnqueue(int) override {}
  weftResult_t copyAsync(void*, const void*, size_t, void*) override {
    return unusable("copyAsync");
  }
  weftResult_t writeFlagAsync(uint32_t*, uint32_t, void*) override {
    return unusable("writeFlagAsync");
  }
  weftResult_t waitFlagAsync(const uint32_t*, uint32_t, void*) override {
    return unusable("waitFlagAsync");
  }
  std::string whyNoRing() override { return "this weft build has no CUDA"; }

 private:
  static weftResult_t unusable(const char* what) {
    return setError(weftInternalError, "%s: this weft build has no CUDA", what);
  }
};

std::atomic<DeviceRuntime*> gOverride{nullptr};

DeviceRuntime* defaultRuntime() {
#ifdef WEFT_HAVE_CUDA
  return cudaDeviceRuntime();
#else
  static NoDeviceRuntime none;
  return &none;
#endif
}

}  // namespace

const char* memKindName(MemKind kind) {
  switch (kind) {
    case MemKind::kHost:
      return "pageable host memory";
    case MemKind::kPinnedHost:
      return "pinned host memory";
    case MemKind::kDevice:
      return "CUDA device memory";
    case MemKind::kManaged:
      return "CUDA managed memory";
  }
  return "?";
}

// Defaults of the ring methods: a runtime without the ring kernel (whyNoRing
// is not empty) is never asked for them, so reaching one is a weft bug.
namespace {
weftResult_t noRing(const char* what) {
  return setError(weftInternalError, "%s: this CUDA runtime has no ring kernel", what);
}
}  // namespace

std::string DeviceRuntime::gpuName(int) { return ""; }
weftResult_t DeviceRuntime::currentDevice(int* device) {
  *device = -1;
  return noRing("currentDevice");
}

weftResult_t DeviceRuntime::prepareKernels(int) { return weftSuccess; }

weftResult_t DeviceRuntime::allocDevice(int, size_t, void**, GpuExport*) {
  return noRing("allocDevice");
}
void DeviceRuntime::freeDevice(void*) {}
weftResult_t DeviceRuntime::openPeer(int, const GpuExport&, void**) { return noRing("openPeer"); }
void DeviceRuntime::closePeer(void*) {}
weftResult_t DeviceRuntime::deviceAddress(const void*, const void**) {
  return noRing("deviceAddress");
}
NicAccess DeviceRuntime::nicAccess(void*, size_t) {
  NicAccess none;
  none.why = "this runtime has no device memory";
  return none;
}
weftResult_t DeviceRuntime::launchRing(weftDataType_t, weftRedOp_t, dev::RingCall*, int, int,
                                       void*) {
  return noRing("launchRing");
}

DeviceRuntime* deviceRuntime() {
  DeviceRuntime* rt = gOverride.load(std::memory_order_acquire);
  return rt != nullptr ? rt : defaultRuntime();
}

void setDeviceRuntimeForTesting(DeviceRuntime* runtime) {
  gOverride.store(runtime, std::memory_order_release);
}

}  // namespace weft
