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

cudaError_t launchWaitFlagKernel(const uint32_t* deviceFlag, uint32_t value, cudaStream_t stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return cudaGetLastError();
}

}  // namespace weft
