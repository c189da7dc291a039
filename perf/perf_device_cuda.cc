// The perf tools' device buffers on the CUDA runtime (perf_device.h).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "perf_device.h"

namespace {

void Ok(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  std::fprintf(stderr, "perf: %s failed: %s\n", what, cudaGetErrorString(rc));
  std::exit(1);
}

// The launcher's local rank, for the GPU choice (weft-run sets
// WEFT_LOCAL_RANK, torchrun LOCAL_RANK, MPI launchers their own; alone: 0).
int LocalRank() {
  for (const char* name :
       {"WEFT_LOCAL_RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::atoi(value);
  }
  return 0;
}

}  // namespace

std::string PerfDeviceSetUp() {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(rc);
  if (count == 0) return "no CUDA device is visible";
  rc = cudaSetDevice(LocalRank() % count);
  if (rc == cudaSuccess) rc = cudaFree(nullptr);  // creates the context now
  if (rc != cudaSuccess) return std::string("cannot use the GPU: ") + cudaGetErrorString(rc);
  return "";
}

void* PerfDeviceAlloc(size_t bytes) {
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  Ok(cudaMemset(ptr, 0, bytes), "cudaMemset");
  Ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // see PerfCopyToDevice
  return ptr;
}

void PerfDeviceFree(void* ptr) { cudaFree(ptr); }

void* PerfDeviceStream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    Ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    return s;
  }();
  return stream;
}

void PerfDeviceSync(void* stream) {
  Ok(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

// cudaMemcpy from pageable memory may return before the copy lands, and it
// runs on the legacy stream, which the tools' non-blocking stream does not
// wait for: without the synchronisation the next call can read the buffer
// first (a GPU run showed wrong results at 8 B-32 KiB, where it wins the race).
void PerfCopyToDevice(void* dst, const void* src, size_t bytes) {
  Ok(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  Ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void PerfCopyToHost(void* dst, const void* src, size_t bytes) {
  Ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}
