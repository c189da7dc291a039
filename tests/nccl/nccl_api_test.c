/* The NCCL drop-in's API test: the job, the helpers, and main. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_api_test.h"

#ifdef TEST_FAKE_DEVICE
#include "nccl_fake_glue.h"
void* bufAlloc(size_t bytes) { return fakeGlueAlloc(bytes); }
void bufFree(void* p) { fakeGlueFree(p); }
void bufPut(void* dst, const void* src, size_t bytes) { fakeGlueUpload(dst, src, bytes); }
void bufGet(void* dst, const void* src, size_t bytes) { fakeGlueDownload(dst, src, bytes); }
void streamSync(TestCtx* t) { fakeGlueSync(t->stream); }
#else
void* bufAlloc(size_t bytes) { return calloc(1, bytes ? bytes : 1); }
void bufFree(void* p) { free(p); }
void bufPut(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }
void bufGet(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }
void streamSync(TestCtx* t) { (void)t; }
#endif

void bufRelease(TestCtx* t, void* p) {
  streamSync(t);
  bufFree(p);
}

void failed(TestCtx* t, const char* what, const char* fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
  printf("rank %d: FAIL %s: %s\n", t->rank, what, detail);
  fflush(stdout);
  t->failures++;
}

int expectResult(TestCtx* t, const char* what, ncclResult_t r, ncclResult_t want) {
  if (r == want) return 1;
  failed(t, what, "returned %d (%s), expected %d; last error: %s", (int)r, ncclGetErrorString(r),
         (int)want, ncclGetLastError(t->comm));
  return 0;
}

/* weft-run's id is 256 hex digits of the id's 128 bytes. */
static int idFromEnv(ncclUniqueId* id) {
  const char* text = getenv("WEFT_UNIQUE_ID");
  if (text == NULL || strlen(text) != 2 * NCCL_UNIQUE_ID_BYTES) return 0;
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) {
    unsigned byte = 0;
    if (sscanf(text + 2 * i, "%2x", &byte) != 1) return 0;
    id->internal[i] = (char)byte;
  }
  return 1;
}

/* A non-blocking creation, polled as NCCL documents it. */
static int initNonBlocking(TestCtx* t, ncclUniqueId id) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "world";
  config.maxCTAs = 4; /* logged as not applied */
  ncclResult_t r = ncclCommInitRankConfig(&t->comm, t->nranks, id, t->rank, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    return expectResult(t, "ncclCommInitRankConfig(blocking=0)", r, ncclInProgress);
  ncclResult_t state = ncclInProgress;
  int polls = 0;
  while (state == ncclInProgress) {
    if (!EXPECT_OK(t, "ncclCommGetAsyncError", ncclCommGetAsyncError(t->comm, &state))) return 0;
    ++polls;
  }
  printf("rank %d: non-blocking init: %s after %d polls\n", t->rank,
         r == ncclInProgress ? "in progress" : "done at once", polls);
  return expectResult(t, "non-blocking init's async error", state, ncclSuccess);
}

static void checkBasics(TestCtx* t) {
  int version = 0, count = 0, rank = -1, device = -1;
  if (EXPECT_OK(t, "ncclGetVersion", ncclGetVersion(&version)) && version != NCCL_VERSION_CODE)
    failed(t, "ncclGetVersion", "%d, not %d", version, NCCL_VERSION_CODE);
  for (int r = 0; r < ncclNumResults; ++r)
    if (ncclGetErrorString((ncclResult_t)r) == NULL || !ncclGetErrorString((ncclResult_t)r)[0])
      failed(t, "ncclGetErrorString", "no text for %d", r);
  EXPECT_OK(t, "ncclCommCount", ncclCommCount(t->comm, &count));
  EXPECT_OK(t, "ncclCommUserRank", ncclCommUserRank(t->comm, &rank));
  EXPECT_OK(t, "ncclCommCuDevice", ncclCommCuDevice(t->comm, &device));
  if (count != t->nranks || rank != t->rank || device < 0)
    failed(t, "queries", "count %d rank %d device %d", count, rank, device);
  if (t->rank == 0) {
    ncclUniqueId fresh;
    memset(&fresh, 0, sizeof(fresh));
    EXPECT_OK(t, "ncclGetUniqueId", ncclGetUniqueId(&fresh));
    int nonzero = 0;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) nonzero |= fresh.internal[i];
    if (!nonzero) failed(t, "ncclGetUniqueId", "all zero");
  }
}

int main(void) {
  TestCtx t;
  memset(&t, 0, sizeof(t));
  const char* rank = getenv("WEFT_RANK");
  const char* size = getenv("WEFT_WORLD_SIZE");
  ncclUniqueId id;
  if (rank == NULL || size == NULL || !idFromEnv(&id)) {
    fprintf(stderr, "run under weft-run (WEFT_UNIQUE_ID, WEFT_RANK, WEFT_WORLD_SIZE)\n");
    return 2;
  }
  t.rank = atoi(rank);
  t.nranks = atoi(size);
#ifdef TEST_FAKE_DEVICE
  fakeGlueInstall();
  t.stream = (cudaStream_t)fakeGlueStream();
#endif
  if (!initNonBlocking(&t, id)) return 1;
  checkBasics(&t);
  checkCollectives(&t);
  checkRooted(&t);
  checkRefusals(&t);
  checkMemoryAndOps(&t);
  checkGroups(&t);
  checkComms(&t);
  checkShrink(&t);
  printf("rank %d: %s (%d failures)\n", t.rank, t.failures ? "FAILED" : "passed", t.failures);
  return t.failures ? 1 : 0;
}
