// What weft needs from CUDA, as one small interface, so that the stream path
// (stream_call.h) is written once and tested without a GPU: the CUDA build
// implements it with the CUDA runtime (cuda_runtime.cc), tests swap in a fake
// (fake_runtime.h) whose "streams" are threads and whose "device memory"
// faults when the host touches it, and CPU-only builds get a runtime that
// says no device is usable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/weft.h"

namespace weft {

enum class MemKind {
  kHost,        // pageable host memory (or anything CUDA does not know)
  kPinnedHost,  // cudaHostAlloc / cudaHostRegister: host memory the GPU can reach
  kDevice,      // cudaMalloc: never touched from the host
  kManaged      // cudaMallocManaged
};

// Device memory of one process as another process (or this one) can open it:
// a CUDA IPC handle, plus who made it, so that a rank of the same process
// (weftCommInitAll) uses the pointer itself instead.
struct GpuExport {
  unsigned char handle[64];  // cudaIpcMemHandle_t (the fake: its own description)
  uint64_t pid;
  uint64_t ptr;  // the address in the exporting process
  int32_t device;
  int32_t pad;
};

namespace dev {
struct RingCall;
}

// How a NIC may reach device memory (GPUDirect RDMA; transports/ib/ib_memory.h).
// Either or both ways may be offered; the verbs side tries the dma-buf first.
struct NicAccess {
  int dmabufFd = -1;          // >= 0: a dma-buf holding the range (the caller closes it)
  uint64_t dmabufOffset = 0;  // where the range starts in it
  void* address = nullptr;    // non-null: ibv_reg_mr may register this address
  std::string addressVia;     // what makes that work ("nvidia-peermem"; the fake's view)
  std::string why;            // neither: why not
};

struct PointerInfo {
  MemKind kind = MemKind::kHost;
  int device = -1;  // ordinal for kDevice and kManaged
};

const char* memKindName(MemKind kind);

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // "" when streams can be used; otherwise why not (ends a sentence).
  virtual std::string whyUnusable() = 0;
  // "" when `stream` can take a call; otherwise why not (the fake knows its
  // streams; CUDA refuses a stream being captured into a graph).
  virtual std::string streamProblem(void* stream) = 0;
  // Cheap gate for the host (NULL stream) path: false when this process cannot
  // hold device memory (the CUDA driver is not even loaded), so that host
  // calls need not classify their buffers.
  virtual bool mayHaveDeviceMemory() = 0;
  virtual weftResult_t classify(const void* ptr, PointerInfo* info) = 0;

  // Pinned, mapped host memory (staging and flags), usable from any device.
  virtual weftResult_t allocPinned(size_t bytes, void** ptr) = 0;
  virtual void freePinned(void* ptr) = 0;

  // Makes `device` (-1: leave as is) current for the enqueue calls that
  // follow on this thread; endEnqueue restores what was current.
  virtual weftResult_t beginEnqueue(int device, int* saved) = 0;
  virtual void endEnqueue(int saved) = 0;

  // Stream operations, executed in enqueue order on `stream`.
  // Copies `bytes` between any two of host, pinned, device or managed memory.
  virtual weftResult_t copyAsync(void* dst, const void* src, size_t bytes, void* stream) = 0;
  // When the stream reaches this point (everything before it complete and
  // visible to the host), it stores `value` into the pinned word `flag`.
  virtual weftResult_t writeFlagAsync(uint32_t* flag, uint32_t value, void* stream) = 0;
  // The stream does not go past this point until (int32_t)(*flag - value) >= 0
  // (a cyclic "flag reached value", as CU_STREAM_WAIT_VALUE_GEQ); what the host
  // wrote before raising the flag is then visible to what follows.
  virtual weftResult_t waitFlagAsync(const uint32_t* flag, uint32_t value, void* stream) = 0;

  // The GPU-driven ring (device_ring.h). A runtime that cannot run it keeps
  // these defaults: whyNoRing says so, and the stream path stages instead.
  virtual std::string whyNoRing() { return "this CUDA runtime has no ring kernel"; }
  // A name of `device` that is the same in every process on the machine
  // (its PCI bus id), so that ranks can tell they share a GPU; "" when
  // sharing one does not matter.
  virtual std::string gpuName(int device);
  // The current device of this thread.
  virtual weftResult_t currentDevice(int* device);
  // Makes every kernel that a call on a stream may launch on `device` ready
  // to run, before the first call: a first launch must not load a kernel or
  // grow the device's stack, which can wait for a kernel that spins until a
  // peer's runs (cuda_runtime.cc). Called by each ring setup; cheap after
  // the first on a device.
  virtual weftResult_t prepareKernels(int device);
  // Zero-filled device memory on `device` (complete when this returns),
  // exported for peers; freeDevice releases it.
  virtual weftResult_t allocDevice(int device, size_t bytes, void** ptr, GpuExport* exported);
  virtual void freeDevice(void* ptr);
  // Maps a peer's exported memory for kernels running on `device`; closePeer undoes it.
  virtual weftResult_t openPeer(int device, const GpuExport& peer, void** ptr);
  virtual void closePeer(void* ptr);
  // The address kernels use for pinned host memory `ptr`.
  virtual weftResult_t deviceAddress(const void* ptr, const void** out);
  // The ways a NIC may register [ptr, ptr + bytes) of device memory.
  virtual NicAccess nicAccess(void* ptr, size_t bytes);
  // Test hook: GPUDirect RDMA is allowed whatever the topology says (the
  // fake's GPU is in no topology; fake::allowGdr). Never true for CUDA.
  virtual bool gdrForced() { return false; }
  // Enqueues the ring kernel (ring_call.h) of `type` and `op` with `nctas`
  // CTAs of `threads` threads on `stream`; `call` is pinned host memory the
  // host finishes writing before the stream reaches the kernel.
  virtual weftResult_t launchRing(weftDataType_t type, weftRedOp_t op, dev::RingCall* call,
                                  int nctas, int threads, void* stream);
};

// The runtime in use: the test override if one is set, else CUDA in CUDA
// builds, else one that reports that no device is usable.
DeviceRuntime* deviceRuntime();
// Test hook (not a public knob): replaces the runtime for the whole process;
// nullptr restores the default. Set it before the first call on a stream.
void setDeviceRuntimeForTesting(DeviceRuntime* runtime);

// Cyclic comparison of flag values (both sides use it).
inline bool flagReached(uint32_t flag, uint32_t value) {
  return static_cast<int32_t>(flag - value) >= 0;
}

}  // namespace weft
