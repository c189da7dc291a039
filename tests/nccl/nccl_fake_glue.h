/* C access to the fake CUDA of weft's tests (src/device/fake_runtime.h) for
 * the NCCL API test: device buffers the host cannot touch, and streams. */
#ifndef NCCL_FAKE_GLUE_H
#define NCCL_FAKE_GLUE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void fakeGlueInstall(void); /* before the first NCCL call */
void* fakeGlueAlloc(size_t bytes);
void fakeGlueFree(void* p);
void fakeGlueUpload(void* dst, const void* src, size_t bytes);
void fakeGlueDownload(void* dst, const void* src, size_t bytes);
void* fakeGlueStream(void);
void fakeGlueSync(void* stream);

#ifdef __cplusplus
}
#endif

#endif
