// The perf tools' device buffers in builds without CUDA (perf_device.h): -D 1
// is refused before anything runs, so the other functions are never reached.
#include <cstdlib>

#include "perf_device.h"

std::string PerfDeviceSetUp() { return "this build of the perf tools has no CUDA"; }
void* PerfDeviceAlloc(size_t) { return nullptr; }
void PerfDeviceFree(void*) {}
void* PerfDeviceStream() { std::abort(); }
void PerfDeviceSync(void*) { std::abort(); }
void PerfCopyToDevice(void*, const void*, size_t) { std::abort(); }
void PerfCopyToHost(void*, const void*, size_t) { std::abort(); }
