// A fake CUDA for tests without a GPU (never used by the library itself):
// a "stream" is an in-order worker thread, and "device memory" is a memfd
// mapped twice, once PROT_NONE (the pointer handed out) and once read-write
// (only the fake's copies use it), so a host access by weft to device memory
// crashes the test instead of passing it. Pointers are classified through a
// registry of fake allocations. Select it with
//   weft::setDeviceRuntimeForTesting(weft::fake::runtime());
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/device_runtime.h"

namespace weft {
namespace fake {

DeviceRuntime* runtime();

// Device (PROT_NONE to the host) and managed (ordinary) memory on fake device
// `device`; pinned host memory as the runtime's allocPinned gives it.
void* deviceAlloc(size_t bytes, int device = 0);
void* managedAlloc(size_t bytes, int device = 0);
void* pinnedAlloc(size_t bytes);
void memFree(void* ptr);  // any of the three
// Synchronous copies through the read-write view (like cudaMemcpy).
void copyToDevice(void* dst, const void* src, size_t bytes);
void copyFromDevice(void* dst, const void* src, size_t bytes);
void deviceMemset(void* dst, int byte, size_t bytes);

// Streams. The handle is a weftStream_t for the API.
void* streamCreate();
void streamDestroy(void* stream);  // after it drained
// Blocks until everything enqueued so far ran.
void streamSync(void* stream);
// Stall: the stream finishes the operation it is in, then runs nothing more
// until streamResume (how a test proves that a call did not wait for it).
void streamStall(void* stream);
void streamResume(void* stream);
// Operations the stream has run since it was created.
uint64_t streamOpsDone(void* stream);
// Enqueues a host function (for tests of in-order execution).
void streamEnqueueHost(void* stream, void (*fn)(void*), void* arg);

// Internal to the fake (fake_memory.cc): the address the fake's own copies use
// for `ptr`, after checking that [ptr, ptr+bytes) lies inside one allocation
// when ptr is in fake memory (a stray copy aborts the test with a message).
void* accessible(const void* ptr, size_t bytes);
weftResult_t classifyFake(const void* ptr, PointerInfo* info);
// Fake IPC: device memory is exported as its memfd, which a peer process
// opens through /proc/<pid>/fd and maps (PROT_NONE again, plus a read-write
// view for the fake's own accesses); a rank of the same process gets the
// pointer itself. exportMemory is false for anything but the start of a
// device allocation; openMemory is nullptr when the file cannot be opened.
bool exportMemory(const void* ptr, GpuExport* out);
void* openMemory(const GpuExport& peer);
// A new descriptor of the memfd behind fake device memory `ptr` (and ptr's
// offset in it), or -1: what nicAccess offers in place of a dma-buf.
int dupMemoryFile(const void* ptr, uint64_t* offset);
void closeMemory(void* ptr);  // only undoes openMemory of another process's memory
// The fake's ring "kernel" (fake_kernel.cc): runs the ring schedule of
// collectives/kernels/ring_call.h with one host thread per CTA, on the
// read-write views of every buffer and FIFO; returns when all CTAs ended.
void runRingKernel(weftDataType_t type, weftRedOp_t op, dev::RingCall* call, int nctas);
// Test hook: the next ring kernel of this process kills it (SIGKILL) once its
// CTA 0 has posted `messages` messages of the call: a rank dying mid-kernel.
void killDuringRingKernel(uint64_t messages);
// Test hook: this process's openPeer fails from now on, as between two GPUs
// without peer access (the ring then proxies those edges over host memory).
void refusePeerAccess();
// Test hook: GPUDirect RDMA is allowed from now on (the fake GPU is in no
// topology); the NIC registers the read-write view of fake device memory.
void allowGdr();
bool anyFakeDeviceMemory();

}  // namespace fake
}  // namespace weft
