// CUDA device buffers and a stream for the perf tools' -D 1: buffers from
// cudaMalloc, every call on one stream, the timing taken up to that stream's
// completion, the check made through host copies. CUDA builds implement it in
// perf_device_cuda.cc; elsewhere (perf_device_none.cc) -D 1 is refused with
// the reason.
#ifndef WEFT_PERF_PERF_DEVICE_H
#define WEFT_PERF_PERF_DEVICE_H

#include <cstddef>
#include <string>

// Selects this rank's GPU (local rank modulo the GPUs visible) and loads
// CUDA, before the communicator is created, as weft's GPU ring needs. "" when
// device buffers can be used; otherwise why not.
std::string PerfDeviceSetUp();
void* PerfDeviceAlloc(size_t bytes);  // zero-filled; nullptr when out of memory
void PerfDeviceFree(void* ptr);
void* PerfDeviceStream();  // the tool's one stream
// These exit with a sentence on a CUDA error.
void PerfDeviceSync(void* stream);
void PerfCopyToDevice(void* dst, const void* src, size_t bytes);
void PerfCopyToHost(void* dst, const void* src, size_t bytes);

#endif  // WEFT_PERF_PERF_DEVICE_H
