/* Refusals, memory, registration, user ops and groups through the NCCL API. */
#include <stdlib.h>
#include <string.h>

#include "nccl_api_test.h"

/* `call` must fail with `want` and a last error that mentions `word`. */
static void refused(TestCtx* t, const char* what, ncclResult_t r, ncclResult_t want,
                    const char* word) {
  if (!expectResult(t, what, r, want)) return;
  const char* text = ncclGetLastError(t->comm);
  if (text == NULL || strstr(text, word) == NULL)
    failed(t, what, "last error \"%s\" does not mention \"%s\"", text ? text : "(null)", word);
}

void checkRefusals(TestCtx* t) {
  void* a = bufAlloc(64);
  void* b = bufAlloc(64);
  refused(t, "fp8 allreduce", ncclAllReduce(a, b, 8, ncclFloat8e5m2, ncclSum, t->comm, t->stream),
          ncclInvalidArgument, "fp8");
  refused(t, "datatype 12", ncclAllReduce(a, b, 8, (ncclDataType_t)12, ncclSum, t->comm, t->stream),
          ncclInvalidArgument, "datatype");
  refused(t, "op 5", ncclAllReduce(a, b, 8, ncclInt32, (ncclRedOp_t)5, t->comm, t->stream),
          ncclInvalidArgument, "op=5");
  refused(t, "NULL comm", ncclAllReduce(a, b, 8, ncclInt32, ncclSum, NULL, t->stream),
          ncclInvalidArgument, "comm");
  refused(t, "gather root", ncclGather(a, b, 2, ncclInt32, t->nranks, t->comm, t->stream),
          ncclInvalidArgument, "root");
  refused(t, "send peer", ncclSend(a, 2, ncclInt32, t->nranks + 3, t->comm, t->stream),
          ncclInvalidArgument, "peer");
  ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
  bad.magic = 0;
  ncclComm_t none = NULL;
  ncclUniqueId id;
  memset(&id, 0, sizeof(id));
  refused(t, "config without initializer", ncclCommInitRankConfig(&none, 2, id, 0, &bad),
          ncclInvalidArgument, "NCCL_CONFIG_INITIALIZER");
  refused(t, "ncclGroupEnd without start", ncclGroupEnd(), ncclInvalidUsage, "ncclGroupStart");
  refused(t, "revoke flags", ncclCommRevoke(t->comm, 7), ncclInvalidArgument, "revokeFlags");
  bufRelease(t, a);
  bufRelease(t, b);
  /* After every refusal the communicator still works. */
  int* one = (int*)bufAlloc(sizeof(int));
  int v = 1, sum = 0;
  bufPut(one, &v, sizeof(v));
  if (EXPECT_OK(t, "allreduce after refusals",
                ncclAllReduce(one, one, 1, ncclInt32, ncclSum, t->comm, t->stream))) {
    streamSync(t);
    bufGet(&sum, one, sizeof(sum));
    if (sum != t->nranks) failed(t, "allreduce after refusals", "%d, not %d", sum, t->nranks);
  }
  bufRelease(t, one);
}

void checkMemoryAndOps(TestCtx* t) {
  /* ncclMemAlloc'd buffers in a collective, registered and as a window. */
  float* buf = NULL;
  const size_t n = 4096;
  if (!EXPECT_OK(t, "ncclMemAlloc", ncclMemAlloc((void**)&buf, n * sizeof(float)))) return;
  float* host = (float*)malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) host[i] = (float)(t->rank + 1);
  bufPut(buf, host, n * sizeof(float));
  void* handle = NULL;
  ncclWindow_t win = NULL;
  EXPECT_OK(t, "ncclCommRegister", ncclCommRegister(t->comm, buf, n * sizeof(float), &handle));
  EXPECT_OK(t, "ncclCommWindowRegister",
            ncclCommWindowRegister(t->comm, buf, n * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC));
  /* Pre-multiplied sum: each rank scales by rank+1, so the sum is sum (r+1)^2. */
  float scalar = (float)(t->rank + 1);
  ncclRedOp_t premul;
  if (EXPECT_OK(t, "ncclRedOpCreatePreMulSum",
                ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate,
                                         t->comm))) {
    if (EXPECT_OK(t, "premul allreduce",
                  ncclAllReduce(buf, buf, n, ncclFloat32, premul, t->comm, t->stream))) {
      streamSync(t);
      bufGet(host, buf, n * sizeof(float));
      float want = 0;
      for (int r = 1; r <= t->nranks; ++r) want += (float)(r * r);
      if (host[0] != want || host[n - 1] != want)
        failed(t, "premul allreduce", "%g, not %g", host[0], want);
    }
    EXPECT_OK(t, "ncclRedOpDestroy", ncclRedOpDestroy(premul, t->comm));
  }
  EXPECT_OK(t, "ncclCommWindowDeregister", ncclCommWindowDeregister(t->comm, win));
  EXPECT_OK(t, "ncclCommDeregister", ncclCommDeregister(t->comm, handle));
  refused(t, "deregister twice", ncclCommDeregister(t->comm, handle), ncclInvalidArgument,
          "handle");
  EXPECT_OK(t, "ncclMemFree", ncclMemFree(buf));
  refused(t, "free twice", ncclMemFree(buf), ncclInvalidArgument, "ncclMemAlloc");
  free(host);
}

void checkGroups(TestCtx* t) {
  /* A simulated group runs nothing and gives an estimate. Rank 0 alone
   * simulates (it is local): the next real call still pairs with the
   * peers' next one. */
  if (t->rank == 0) {
    void* big = bufAlloc(1 << 20);
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    ncclGroupStart();
    ncclAllReduce(big, big, (1 << 20) / 4, ncclFloat32, ncclSum, t->comm, t->stream);
    ncclAllGather(big, big, 16, ncclFloat32, t->comm, t->stream);
    if (EXPECT_OK(t, "ncclGroupSimulateEnd", ncclGroupSimulateEnd(&sim)) &&
        !(sim.estimatedTime > 0))
      failed(t, "ncclGroupSimulateEnd", "estimatedTime %g", sim.estimatedTime);
    printf("rank 0: simulated 1 MiB allreduce + allgather: %.1f us\n", sim.estimatedTime);
    bufRelease(t, big);
  }
  /* Several collectives in one group, then checked. */
  int* a = (int*)bufAlloc(4 * sizeof(int));
  int v[4] = {1, 2, 3, 4}, got[4];
  bufPut(a, v, sizeof(v));
  ncclGroupStart();
  ncclResult_t r1 = ncclAllReduce(a, a, 2, ncclInt32, ncclSum, t->comm, t->stream);
  ncclResult_t r2 = ncclAllReduce(a + 2, a + 2, 2, ncclInt32, ncclMax, t->comm, t->stream);
  ncclResult_t e = ncclGroupEnd();
  if (EXPECT_OK(t, "grouped allreduce", r1) && EXPECT_OK(t, "grouped allreduce", r2) &&
      EXPECT_OK(t, "ncclGroupEnd", e)) {
    streamSync(t);
    bufGet(got, a, sizeof(got));
    if (got[0] != t->nranks || got[1] != 2 * t->nranks || got[2] != 3 || got[3] != 4)
      failed(t, "grouped allreduce", "%d %d %d %d", got[0], got[1], got[2], got[3]);
  }
  bufRelease(t, a);
}
