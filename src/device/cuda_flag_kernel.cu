// The fallback for flag waits where the driver has no stream memory
// operations (cuStreamWaitValue32): one thread that polls the mapped host
// word until it reaches the value, then fences so that the stream's later
// operations see what the host wrote before raising it (cuda_runtime.cc).
#include <cuda_runtime.h>

#include <cstdint>

namespace weft {
namespace {

__global__ void waitFlagKernel(const volatile uint32_t* flag, uint32_t value) {
  while (static_cast<int32_t>(*flag - value) < 0) __nanosleep(2000);
  __threadfence_system();
}

}  // namespace

// Loads the kernel now (see loadRingKernels in ring_call_kernel.cu: a first
// launch must not have to load it); returns its local memory per thread.
cudaError_t loadWaitFlagKernel(size_t* localBytes) {
  cudaFuncAttributes attr{};
  const cudaError_t rc = cudaFuncGetAttributes(&attr, waitFlagKernel);
  *localBytes = attr.localSizeBytes;
  return rc;
}

cudaError_t launchWaitFlagKernel(const uint32_t* deviceFlag, uint32_t value, cudaStream_t stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return cudaGetLastError();
}

}  // namespace weft
