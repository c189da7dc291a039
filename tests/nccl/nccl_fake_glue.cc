// The fake CUDA behind nccl_fake_glue.h.
#include "nccl_fake_glue.h"

#include "device/fake_runtime.h"

extern "C" {

void fakeGlueInstall(void) { weft::setDeviceRuntimeForTesting(weft::fake::runtime()); }
void* fakeGlueAlloc(size_t bytes) { return weft::fake::deviceAlloc(bytes ? bytes : 1); }
void fakeGlueFree(void* p) { weft::fake::memFree(p); }
void fakeGlueUpload(void* dst, const void* src, size_t bytes) {
  weft::fake::copyToDevice(dst, src, bytes);
}
void fakeGlueDownload(void* dst, const void* src, size_t bytes) {
  weft::fake::copyFromDevice(dst, src, bytes);
}
void* fakeGlueStream(void) { return weft::fake::streamCreate(); }
void fakeGlueSync(void* stream) { weft::fake::streamSync(stream); }

}  // extern "C"
