/* The NCCL drop-in's API test, shared pieces. The program uses only nccl.h
 * (it also builds against NVIDIA's libnccl.so.2) and runs under weft-run:
 * the job's id comes from WEFT_UNIQUE_ID as text. Built twice for weft: on
 * host buffers with NULL streams (weft's extension), linked to libnccl.so.2;
 * and with TEST_FAKE_DEVICE, on the fake CUDA's device buffers and streams. */
#ifndef NCCL_API_TEST_H
#define NCCL_API_TEST_H

#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
  int rank;
  int nranks;
  ncclComm_t comm;
  cudaStream_t stream; /* NULL on host buffers */
  int failures;
} TestCtx;

/* Buffers the calls use: host memory, or fake device memory. */
void* bufAlloc(size_t bytes);
void bufFree(void* p);
/* Frees p once the calls on t->stream ran (they may still be using it). */
void bufRelease(TestCtx* t, void* p);
void bufPut(void* dst, const void* src, size_t bytes);
void bufGet(void* dst, const void* src, size_t bytes);
/* Waits until the calls made on t->stream ran. */
void streamSync(TestCtx* t);

/* Records a failure: "rank R: FAIL what: detail". */
void failed(TestCtx* t, const char* what, const char* fmt, ...);
/* Checks that `r` is `want`, else records it with ncclGetLastError. */
int expectResult(TestCtx* t, const char* what, ncclResult_t r, ncclResult_t want);
#define EXPECT_OK(t, what, call) expectResult((t), (what), (call), ncclSuccess)

/* The checks, one group per file. */
void checkCollectives(TestCtx* t);  /* nccl_api_coll.c */
void checkRooted(TestCtx* t);       /* nccl_api_coll.c: gather, scatter, send/recv */
void checkRefusals(TestCtx* t);     /* nccl_api_misc.c */
void checkMemoryAndOps(TestCtx* t); /* nccl_api_misc.c */
void checkGroups(TestCtx* t);       /* nccl_api_misc.c: simulate */
void checkComms(TestCtx* t);        /* nccl_api_comms.c: split, scalable, finalize */
void checkShrink(TestCtx* t);       /* nccl_api_comms.c: revoke, shrink, abort */

#endif
