// The DeviceRuntime of CUDA builds (device_runtime.h), on the CUDA runtime,
// which weft links statically. Flags use the driver's stream memory
// operations (cuStreamWriteValue32 / cuStreamWaitValue32), reached through
// cudaGetDriverEntryPoint so that weft never links libcuda; where the driver
// lacks them, a flag write is a host function (cudaLaunchHostFunc) and a flag
// wait a one-thread polling kernel (cuda_flag_kernel.cu). Every CUDA failure
// becomes weftUnhandledCudaError with a sentence naming the call.
//
// Ordering: cuStreamWriteValue32 without CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER
// fences before the write, and runs after the stream's earlier copies
// completed, so the host that acquires the flag sees the copied data. After
// cuStreamWaitValue32 is satisfied, the stream's later copies read host memory
// through PCIe, which is coherent with the CPU caches; the host stored the data
// before its release store of the flag.
#include <cuda.h>
#include <cuda_runtime.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include <atomic>
#include <mutex>
#include <vector>

#include "base/device_runtime.h"
#include "base/error.h"
#include "base/log.h"
#include "collectives/kernels/ring_call.h"
#include "device/loaded_library_watch.h"

namespace weft {

cudaError_t launchWaitFlagKernel(const uint32_t* deviceFlag, uint32_t value, cudaStream_t stream);
cudaError_t loadWaitFlagKernel(size_t* localBytes);  // cuda_flag_kernel.cu
namespace cuda {
cudaError_t launchRingCall(int32_t kind, weftDataType_t type, weftRedOp_t op, dev::RingCall* call,
                           int nctas, int threads, cudaStream_t stream);  // ring_call_kernel.cu
cudaError_t loadRingKernels(size_t* maxLocalBytes, int* kernels);
}  // namespace cuda

namespace {

using PointerGetAttributesFn = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
using StreamValue32Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
using GetHandleForRangeFn = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType,
                                         unsigned long long);

weftResult_t cudaFailed(const char* call, cudaError_t rc) {
  return setError(weftUnhandledCudaError, "%s failed: %s (%s)", call, cudaGetErrorName(rc),
                  cudaGetErrorString(rc));
}

void* driverEntryPoint(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t rc = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status);
#else
  cudaError_t rc = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &status);
#endif
  if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess) {
    cudaGetLastError();  // not sticky; do not leave it for the user
    return nullptr;
  }
  return fn;
}

// nvidia-peermem (or the older nv_peer_mem) lets ibv_reg_mr pin GPU memory.
bool peerMemoryModuleLoaded() {
  return access("/sys/kernel/mm/memory_peers/nv_mem/version", F_OK) == 0 ||
         access("/sys/module/nvidia_peermem", F_OK) == 0;
}

struct HostFlagWrite {
  uint32_t* flag;
  uint32_t value;
};

// dl_iterate_phdr callbacks: the loader's count of objects ever loaded (from
// the first object, then stop), or whether libcuda is among the loaded ones.
int loadCountOf(dl_phdr_info* info, size_t, void* arg) {
  *static_cast<unsigned long long*>(arg) = info->dlpi_adds;
  return 1;
}
unsigned long long loadCount() {
  unsigned long long adds = 0;
  dl_iterate_phdr(loadCountOf, &adds);
  return adds;
}
int isLibcuda(dl_phdr_info* info, size_t, void* arg) {
  if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "libcuda.so") != nullptr) {
    *static_cast<bool*>(arg) = true;
    return 1;
  }
  return 0;
}
bool libcudaLoaded() {
  bool found = false;
  dl_iterate_phdr(isLibcuda, &found);
  return found;
}

void CUDART_CB writeFlagOnHost(void* arg) {
  auto* w = static_cast<HostFlagWrite*>(arg);
  __atomic_store_n(w->flag, w->value, __ATOMIC_RELEASE);
  delete w;
}

class CudaRuntime : public DeviceRuntime {
 public:
  std::string whyUnusable() override {
    init();
    return why_;
  }
  std::string streamProblem(void* stream) override {
    // The collective is queued when the API is called, not when a graph is
    // launched: capture cannot work on this path.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    cudaError_t rc = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      return std::string("cudaStreamIsCapturing failed: ") + cudaGetErrorString(rc);
    }
    if (status != cudaStreamCaptureStatusNone)
      return "it is being captured into a CUDA graph, which the host-staged path cannot do";
    return "";
  }

  bool mayHaveDeviceMemory() override {
    // Device memory exists only once the process loaded the driver. While it
    // is not loaded, each host call pays one loader lookup (about 30 ns: the
    // count of objects loaded so far), and a scan only when that count moved.
    // (dlopen with RTLD_NOLOAD costs tens of microseconds: it opens the file.)
    return driverWatch_.loaded();
  }

  weftResult_t classify(const void* ptr, PointerInfo* info) override {
    *info = PointerInfo();
    init();
    if (!why_.empty() || getAttributes_ == nullptr) return weftSuccess;  // no device: host
    unsigned memType = 0, managed = 0;  // managed may be written as a 1-byte bool
    int ordinal = -1;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* data[] = {&memType, &managed, &ordinal};
    // Unknown (pageable) pointers are not an error: the attributes stay zero.
    CUresult rc = getAttributes_(3, attrs, data, reinterpret_cast<CUdeviceptr>(ptr));
    if (rc != CUDA_SUCCESS)
      return setError(weftUnhandledCudaError, "cuPointerGetAttributes(%p) failed: CUresult %d", ptr,
                      static_cast<int>(rc));
    if (managed != 0) {
      info->kind = MemKind::kManaged;
      info->device = ordinal;
    } else if (memType == CU_MEMORYTYPE_DEVICE) {
      info->kind = MemKind::kDevice;
      info->device = ordinal;
    } else if (memType == CU_MEMORYTYPE_HOST) {
      info->kind = MemKind::kPinnedHost;
    }
    return weftSuccess;
  }

  weftResult_t allocPinned(size_t bytes, void** ptr) override {
    cudaError_t rc = cudaHostAlloc(ptr, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
    return rc == cudaSuccess ? weftSuccess : cudaFailed("cudaHostAlloc (staging)", rc);
  }
  void freePinned(void* ptr) override { cudaFreeHost(ptr); }

  weftResult_t beginEnqueue(int device, int* saved) override {
    *saved = -1;
    if (device < 0) return weftSuccess;
    int current = -1;
    cudaError_t rc = cudaGetDevice(&current);
    if (rc != cudaSuccess) return cudaFailed("cudaGetDevice", rc);
    if (current == device) return weftSuccess;
    rc = cudaSetDevice(device);
    if (rc != cudaSuccess) return cudaFailed("cudaSetDevice (the buffers' device)", rc);
    *saved = current;
    return weftSuccess;
  }
  void endEnqueue(int saved) override {
    if (saved >= 0) cudaSetDevice(saved);
  }

  weftResult_t copyAsync(void* dst, const void* src, size_t bytes, void* stream) override {
    cudaError_t rc =
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
    return rc == cudaSuccess ? weftSuccess : cudaFailed("cudaMemcpyAsync", rc);
  }

  weftResult_t writeFlagAsync(uint32_t* flag, uint32_t value, void* stream) override {
    auto s = static_cast<cudaStream_t>(stream);
    if (writeValue_ != nullptr && memOps_.load(std::memory_order_relaxed)) {
      CUdeviceptr d = 0;
      WEFT_CHECK(devicePointer(flag, &d));
      CUresult rc = writeValue_(reinterpret_cast<CUstream>(s), d, value, 0);
      if (rc == CUDA_SUCCESS) return weftSuccess;
      if (rc != CUDA_ERROR_NOT_SUPPORTED)
        return setError(weftUnhandledCudaError, "cuStreamWriteValue32 failed: CUresult %d",
                        static_cast<int>(rc));
      memOps_.store(false, std::memory_order_relaxed);
    }
    auto* w = new HostFlagWrite{flag, value};
    cudaError_t rc = cudaLaunchHostFunc(s, writeFlagOnHost, w);
    if (rc != cudaSuccess) {
      delete w;
      return cudaFailed("cudaLaunchHostFunc (flag write)", rc);
    }
    return weftSuccess;
  }

  // The GPU ring (device_ring.h): FIFO memory from cudaMalloc, shared with
  // other processes through CUDA IPC (the importer maps it with peer access
  // enabled lazily), used as is by ranks of this process.
  std::string whyNoRing() override {
    // Asked at communicator init: a process that has not loaded CUDA (no GPU
    // selected yet) does not get it loaded by weft just for this.
    if (!mayHaveDeviceMemory())
      return "the process had not loaded CUDA when the communicator was created (select the "
             "GPU with cudaSetDevice first)";
    init();
    return why_;
  }
  std::string gpuName(int device) override {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
      cudaGetLastError();
      return "device " + std::to_string(device);  // may match another process: errs on staging
    }
    return bus;
  }
  weftResult_t currentDevice(int* device) override {
    cudaError_t rc = cudaGetDevice(device);
    return rc == cudaSuccess ? weftSuccess : cudaFailed("cudaGetDevice", rc);
  }
  // CUDA loads kernels lazily (CUDA_MODULE_LOADING=LAZY is the default) and
  // grows a context's per-thread stack when a kernel needs more than it has;
  // either may synchronise the context. At a ring call's first launch that
  // would wait for the neighbour's kernel, which spins until ours runs: a
  // deadlock that CUDA's lazy-loading notes describe, and that NCCL avoids the
  // same way, by loading its kernels and raising the stack limit at init.
  weftResult_t prepareKernels(int device) override {
    std::lock_guard<std::mutex> lock(preparedMu_);
    for (int d : prepared_)
      if (d == device) return weftSuccess;
    int saved = -1;
    WEFT_CHECK(beginEnqueue(device, &saved));
    size_t ringLocal = 0, flagLocal = 0;
    int kernels = 0;
    cudaError_t rc = cuda::loadRingKernels(&ringLocal, &kernels);
    const char* what = "loading the GPU ring kernels (cudaFuncGetAttributes)";
    if (rc == cudaSuccess) {
      what = "loading the flag-wait kernel (cudaFuncGetAttributes)";
      rc = loadWaitFlagKernel(&flagLocal);
    }
    const size_t need = ringLocal > flagLocal ? ringLocal : flagLocal;
    size_t stack = 0;
    if (rc == cudaSuccess) {
      what = "cudaDeviceGetLimit (stack size)";
      rc = cudaDeviceGetLimit(&stack, cudaLimitStackSize);
    }
    if (rc == cudaSuccess && need > stack) {
      what = "cudaDeviceSetLimit (stack size for the GPU ring kernels)";
      rc = cudaDeviceSetLimit(cudaLimitStackSize, need);
    }
    endEnqueue(saved);
    if (rc != cudaSuccess) return cudaFailed(what, rc);
    WEFT_INFO(INIT,
              "device %d: %d GPU ring kernels loaded, at most %zu bytes of local memory per "
              "thread (stack limit %zu)",
              device, kernels, need, need > stack ? need : stack);
    prepared_.push_back(device);
    return weftSuccess;
  }
  weftResult_t allocDevice(int device, size_t bytes, void** ptr, GpuExport* exported) override {
    static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(exported->handle), "IPC handle size");
    int saved = -1;
    WEFT_CHECK(beginEnqueue(device, &saved));
    cudaError_t rc = cudaMalloc(ptr, bytes);
    const char* what = "cudaMalloc (GPU ring FIFOs)";
    if (rc == cudaSuccess) {
      what = "cudaMemset (GPU ring FIFOs)";
      rc = cudaMemset(*ptr, 0, bytes);
    }
    if (rc == cudaSuccess) {
      what = "cudaDeviceSynchronize (GPU ring FIFOs)";
      rc = cudaDeviceSynchronize();  // zeroed before any peer can write into it
    }
    cudaIpcMemHandle_t handle;
    if (rc == cudaSuccess) {
      what = "cudaIpcGetMemHandle (GPU ring FIFOs)";
      rc = cudaIpcGetMemHandle(&handle, *ptr);
    }
    endEnqueue(saved);
    if (rc != cudaSuccess) {
      if (*ptr != nullptr) cudaFree(*ptr);
      *ptr = nullptr;
      return cudaFailed(what, rc);
    }
    *exported = GpuExport();
    std::memcpy(exported->handle, &handle, sizeof(handle));
    exported->pid = static_cast<uint64_t>(getpid());
    exported->ptr = reinterpret_cast<uintptr_t>(*ptr);
    exported->device = device;
    return weftSuccess;
  }
  void freeDevice(void* ptr) override { cudaFree(ptr); }
  // A dma-buf of the page-aligned range around [ptr, ptr + bytes) (CUDA 11.7
  // driver API, reached through the runtime so weft need not link libcuda),
  // and the address itself where nvidia-peermem is loaded.
  NicAccess nicAccess(void* ptr, size_t bytes) override {
    NicAccess out;
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr) / page * page;
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(ptr) + bytes + page - 1) / page * page;
    auto getHandle =
        reinterpret_cast<GetHandleForRangeFn>(driverEntryPoint("cuMemGetHandleForAddressRange"));
    int fd = -1;
    const CUresult rc = getHandle == nullptr ? CUDA_ERROR_NOT_SUPPORTED
                                             : getHandle(&fd, static_cast<CUdeviceptr>(lo), hi - lo,
                                                         CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc == CUDA_SUCCESS) {
      out.dmabufFd = fd;
      out.dmabufOffset = reinterpret_cast<uintptr_t>(ptr) - lo;
    }
    if (peerMemoryModuleLoaded()) {
      out.address = ptr;
      out.addressVia = "nvidia-peermem";
    }
    if (out.dmabufFd < 0 && out.address == nullptr)
      out.why = "cuMemGetHandleForAddressRange gave no dma-buf (CUresult " + std::to_string(rc) +
                ") and nvidia-peermem is not loaded";
    return out;
  }
  weftResult_t openPeer(int device, const GpuExport& peer, void** ptr) override {
    int saved = -1;
    WEFT_CHECK(beginEnqueue(device, &saved));
    cudaError_t rc = cudaSuccess;
    const char* what = "cudaIpcOpenMemHandle (a ring neighbour's FIFOs)";
    if (peer.pid == static_cast<uint64_t>(getpid())) {
      // A rank of this process: the same address space, peer access if needed.
      *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(peer.ptr));
      if (peer.device != device) {
        what = "cudaDeviceEnablePeerAccess (a ring neighbour's GPU)";
        rc = cudaDeviceEnablePeerAccess(peer.device, 0);
        if (rc == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
          rc = cudaSuccess;
        }
      }
    } else {
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, peer.handle, sizeof(handle));
      rc = cudaIpcOpenMemHandle(ptr, handle, cudaIpcMemLazyEnablePeerAccess);
      if (rc == cudaSuccess) {
        std::lock_guard<std::mutex> lock(openedMu_);
        opened_.push_back(*ptr);
      }
    }
    endEnqueue(saved);
    return rc == cudaSuccess ? weftSuccess : cudaFailed(what, rc);
  }
  void closePeer(void* ptr) override {
    std::lock_guard<std::mutex> lock(openedMu_);
    for (size_t i = 0; i < opened_.size(); ++i) {
      if (opened_[i] != ptr) continue;
      cudaIpcCloseMemHandle(ptr);
      opened_.erase(opened_.begin() + static_cast<long>(i));
      return;
    }
  }
  weftResult_t deviceAddress(const void* ptr, const void** out) override {
    void* d = nullptr;
    cudaError_t rc = cudaHostGetDevicePointer(&d, const_cast<void*>(ptr), 0);
    if (rc != cudaSuccess) return cudaFailed("cudaHostGetDevicePointer (GPU ring)", rc);
    *out = d;
    return weftSuccess;
  }
  weftResult_t launchRing(weftDataType_t type, weftRedOp_t op, dev::RingCall* call, int nctas,
                          int threads, void* stream) override {
    const void* d = nullptr;
    WEFT_CHECK(deviceAddress(call, &d));
    cudaError_t rc = cuda::launchRingCall(call->kind, type, op,
                                          static_cast<dev::RingCall*>(const_cast<void*>(d)), nctas,
                                          threads, static_cast<cudaStream_t>(stream));
    return rc == cudaSuccess ? weftSuccess : cudaFailed("launching the GPU ring kernel", rc);
  }

  weftResult_t waitFlagAsync(const uint32_t* flag, uint32_t value, void* stream) override {
    auto s = static_cast<cudaStream_t>(stream);
    CUdeviceptr d = 0;
    WEFT_CHECK(devicePointer(flag, &d));
    if (waitValue_ != nullptr && memOps_.load(std::memory_order_relaxed)) {
      CUresult rc = waitValue_(reinterpret_cast<CUstream>(s), d, value, CU_STREAM_WAIT_VALUE_GEQ);
      if (rc == CUDA_SUCCESS) return weftSuccess;
      if (rc != CUDA_ERROR_NOT_SUPPORTED)
        return setError(weftUnhandledCudaError, "cuStreamWaitValue32 failed: CUresult %d",
                        static_cast<int>(rc));
      memOps_.store(false, std::memory_order_relaxed);
    }
    cudaError_t rc = launchWaitFlagKernel(reinterpret_cast<const uint32_t*>(d), value, s);
    return rc == cudaSuccess ? weftSuccess : cudaFailed("launching the flag-wait kernel", rc);
  }

 private:
  void init() {
    std::call_once(once_, [this] {
      int n = 0;
      cudaError_t rc = cudaGetDeviceCount(&n);
      if (rc != cudaSuccess) {
        why_ = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(rc);
        cudaGetLastError();
        return;
      }
      if (n == 0) {
        why_ = "no CUDA device is visible";
        return;
      }
      getAttributes_ =
          reinterpret_cast<PointerGetAttributesFn>(driverEntryPoint("cuPointerGetAttributes"));
      writeValue_ = reinterpret_cast<StreamValue32Fn>(driverEntryPoint("cuStreamWriteValue32"));
      waitValue_ = reinterpret_cast<StreamValue32Fn>(driverEntryPoint("cuStreamWaitValue32"));
      if (getAttributes_ == nullptr)
        why_ = "the CUDA driver has no cuPointerGetAttributes entry point";
      driverWatch_.markLoaded();
    });
  }

  static weftResult_t devicePointer(const uint32_t* flag, CUdeviceptr* out) {
    void* d = nullptr;
    cudaError_t rc = cudaHostGetDevicePointer(&d, const_cast<uint32_t*>(flag), 0);
    if (rc != cudaSuccess) return cudaFailed("cudaHostGetDevicePointer (stream flag)", rc);
    *out = reinterpret_cast<CUdeviceptr>(d);
    return weftSuccess;
  }

  std::once_flag once_;
  std::string why_;
  LoadedLibraryWatch driverWatch_{loadCount, libcudaLoaded};
  std::atomic<bool> memOps_{true};
  PointerGetAttributesFn getAttributes_ = nullptr;
  StreamValue32Fn writeValue_ = nullptr;
  StreamValue32Fn waitValue_ = nullptr;
  std::mutex preparedMu_;
  std::vector<int> prepared_;  // devices whose kernels prepareKernels loaded
  std::mutex openedMu_;
  std::vector<void*> opened_;  // IPC mappings made by openPeer (closePeer closes them)
};

}  // namespace

DeviceRuntime* cudaDeviceRuntime() {
  static CudaRuntime* rt = new CudaRuntime();  // never destroyed: streams may outlive main
  return rt;
}

}  // namespace weft
