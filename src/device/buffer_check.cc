// Buffer checks for calls with and without a stream (see stream_call.h). The
// host path (NULL stream) pays for them only once the process can hold device
// memory at all (DeviceRuntime::mayHaveDeviceMemory). The classification is
// kept in the call, so the stream path does not ask the runtime again.
#include "base/device_runtime.h"
#include "base/error.h"
#include "core/comm.h"
#include "device/staging_plan.h"
#include "device/stream_call.h"

namespace weft {

weftResult_t checkCallBuffers(weftComm* comm, const char* fn, Call* call, weftStream_t stream) {
  DeviceRuntime* rt = deviceRuntime();
  if (stream != nullptr) {
    std::string why = rt->whyUnusable();
    if (!why.empty())
      return setError(weftInvalidArgument, "%s: stream is set but no CUDA device is usable: %s", fn,
                      why.c_str());
    why = rt->streamProblem(stream);
    if (!why.empty())
      return setError(weftInvalidArgument, "%s: stream=%p cannot be used: %s", fn, stream,
                      why.c_str());
  } else if (!rt->mayHaveDeviceMemory()) {
    return weftSuccess;
  }
  BufferUse uses[2];
  const int n = buffersOf(*call, comm->rank, comm->nranks, uses);
  const char* deviceArg = nullptr;
  int device = -1;
  for (int i = 0; i < n; ++i) {
    PointerInfo& info = call->buffers[i];
    WEFT_CHECK(rt->classify(uses[i].ptr, &info));
    if (stream == nullptr) {
      if (info.kind == MemKind::kDevice)
        return setError(weftInvalidArgument,
                        "%s: %s=%p is CUDA device memory (device %d) but stream is NULL (host "
                        "semantics): pass the cudaStream_t to run on, or a host buffer",
                        fn, uses[i].name, uses[i].ptr, info.device);
      continue;
    }
    if (info.kind == MemKind::kHost)
      return setError(weftInvalidArgument,
                      "%s: %s=%p is pageable host memory; with a stream, buffers must be CUDA "
                      "device, managed or pinned (cudaHostAlloc) memory",
                      fn, uses[i].name, uses[i].ptr);
    if (info.kind == MemKind::kPinnedHost) continue;
    if (deviceArg == nullptr) {
      deviceArg = uses[i].name;
      device = info.device;
    } else if (info.device != device) {
      return setError(weftInvalidArgument,
                      "%s: %s is on device %d but %s is on device %d: the buffers of a call must "
                      "be on one device",
                      fn, uses[i].name, info.device, deviceArg, device);
    }
  }
  call->classified = true;
  return weftSuccess;
}

}  // namespace weft
