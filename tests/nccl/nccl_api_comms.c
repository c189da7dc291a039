/* Communicators through the NCCL API: split (blocking and not), finalize,
 * creations inside a group, the scalable and single-process inits, revoke,
 * shrink and abort. Communicators that one thread drives together use host
 * buffers, so that no stream is shared by two of them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_api_test.h"

/* An allreduce of one int on comm (host memory): the sum of `mine`. */
static int sumOn(TestCtx* t, const char* what, ncclComm_t comm, int mine) {
  int v = mine;
  if (!EXPECT_OK(t, what, ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, comm, NULL))) return -1;
  return v;
}

static void waitReady(TestCtx* t, const char* what, ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress)
    if (!EXPECT_OK(t, what, ncclCommGetAsyncError(comm, &state))) return;
  expectResult(t, what, state, ncclSuccess);
}

/* A split that may be non-blocking (config NULL inherits the parent's, and
 * the world communicator is non-blocking): polled until ready. */
static int split(TestCtx* t, const char* what, ncclComm_t parent, int color, int key,
                 ncclComm_t* out, ncclConfig_t* config) {
  ncclResult_t r = ncclCommSplit(parent, color, key, out, config);
  if (r != ncclInProgress && !EXPECT_OK(t, what, r)) return 0;
  if (*out != NULL) waitReady(t, what, *out);
  return 1;
}

/* A fresh id from rank 0, broadcast over the world communicator. */
static void shareId(TestCtx* t, ncclUniqueId* id) {
  if (t->rank == 0) ncclGetUniqueId(id);
  void* dev = bufAlloc(sizeof(*id));
  bufPut(dev, id, sizeof(*id));
  EXPECT_OK(t, "broadcast of an id",
            ncclBroadcast(dev, dev, sizeof(*id), ncclUint8, 0, t->comm, t->stream));
  streamSync(t);
  bufGet(id, dev, sizeof(*id));
  bufRelease(t, dev);
}

static void checkSplit(TestCtx* t) {
  /* Odd and even ranks, ordered by descending rank. */
  ncclComm_t half = NULL;
  if (!split(t, "ncclCommSplit", t->comm, t->rank % 2, -t->rank, &half, NULL)) return;
  int count = 0, rank = -1, want = (t->nranks - t->rank % 2 + 1) / 2;
  ncclCommCount(half, &count);
  ncclCommUserRank(half, &rank);
  if (count != want || rank != (want - 1 - t->rank / 2))
    failed(t, "ncclCommSplit", "count %d rank %d", count, rank);
  int sum = 0;
  for (int r = t->rank % 2; r < t->nranks; r += 2) sum += r;
  if (sumOn(t, "allreduce on a split", half, t->rank) != sum)
    failed(t, "allreduce on a split", "wrong sum");
  EXPECT_OK(t, "ncclCommDestroy(split)", ncclCommDestroy(half));
  /* NCCL_SPLIT_NOCOLOR on the odd ranks: they get NULL. */
  ncclComm_t even = NULL;
  int color = t->rank % 2 ? NCCL_SPLIT_NOCOLOR : 0;
  if (split(t, "ncclCommSplit(NOCOLOR)", t->comm, color, 0, &even, NULL) &&
      (even == NULL) != (color == NCCL_SPLIT_NOCOLOR))
    failed(t, "ncclCommSplit(NOCOLOR)", "newcomm %p", (void*)even);
  if (even) ncclCommDestroy(even);
  /* Non-blocking split and finalize. */
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t copy = NULL;
  if (!split(t, "ncclCommSplit(blocking=0)", t->comm, 0, t->rank, &copy, &config)) return;
  if (sumOn(t, "allreduce on a non-blocking split", copy, 1) != t->nranks)
    failed(t, "allreduce on a non-blocking split", "wrong sum");
  ncclResult_t r = ncclCommFinalize(copy);
  if (r != ncclInProgress) EXPECT_OK(t, "ncclCommFinalize", r);
  waitReady(t, "ncclCommFinalize", copy);
  EXPECT_OK(t, "ncclCommDestroy after finalize", ncclCommDestroy(copy));
}

/* Two ranks of a new job in this process, created inside one group by this
 * thread, then driven together in a group. */
static void checkGroupCreation(TestCtx* t) {
  ncclUniqueId id;
  if (!EXPECT_OK(t, "ncclGetUniqueId", ncclGetUniqueId(&id))) return;
  ncclComm_t pair[2] = {NULL, NULL};
  ncclGroupStart();
  ncclResult_t a = ncclCommInitRank(&pair[0], 2, id, 0);
  ncclResult_t b = ncclCommInitRank(&pair[1], 2, id, 1);
  ncclResult_t e = ncclGroupEnd();
  if (!EXPECT_OK(t, "ncclCommInitRank in a group", a) || !EXPECT_OK(t, "ncclCommInitRank", b) ||
      !EXPECT_OK(t, "ncclGroupEnd (creation)", e))
    return;
  int v[2] = {3, 4};
  ncclGroupStart();
  for (int i = 0; i < 2; ++i) ncclAllReduce(&v[i], &v[i], 1, ncclInt32, ncclSum, pair[i], NULL);
  if (EXPECT_OK(t, "group over two communicators", ncclGroupEnd()) && (v[0] != 7 || v[1] != 7))
    failed(t, "group over two communicators", "%d %d", v[0], v[1]);
  for (int i = 0; i < 2; ++i) ncclCommDestroy(pair[i]);
  /* The same from ncclCommInitAll. */
  ncclComm_t all[3];
  if (EXPECT_OK(t, "ncclCommInitAll", ncclCommInitAll(all, 3, NULL))) {
    int w[3] = {1, 2, 3};
    ncclGroupStart();
    for (int i = 0; i < 3; ++i) ncclAllReduce(&w[i], &w[i], 1, ncclInt32, ncclSum, all[i], NULL);
    if (EXPECT_OK(t, "group over ncclCommInitAll", ncclGroupEnd()) && (w[0] != 6 || w[2] != 6))
      failed(t, "group over ncclCommInitAll", "%d %d", w[0], w[2]);
    for (int i = 0; i < 3; ++i) ncclCommDestroy(all[i]);
  }
}

/* A non-blocking creation aborted while in progress: abort returns at once,
 * and the creation, left to finish, frees what it made. */
static void checkAbortDuringInit(TestCtx* t) {
  ncclUniqueId id;
  shareId(t, &id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = NULL;
  ncclResult_t r = ncclCommInitRankConfig(&comm, t->nranks, id, t->rank, &config);
  if (r != ncclInProgress && !EXPECT_OK(t, "ncclCommInitRankConfig(blocking=0)", r)) return;
  EXPECT_OK(t, "ncclCommAbort during a non-blocking init", ncclCommAbort(comm));
}

/* A watchdog thread polls the communicator's error, as frameworks do, while
 * this thread makes calls on it. */
typedef struct {
  ncclComm_t comm;
  atomic_int stop;
  int bad;
} Watchdog;
static void* watch(void* arg) {
  Watchdog* w = (Watchdog*)arg;
  while (!atomic_load(&w->stop)) {
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(w->comm, &state) != ncclSuccess || state != ncclSuccess) w->bad++;
  }
  return NULL;
}
static void checkWatchdog(TestCtx* t) {
  Watchdog w;
  w.comm = t->comm;
  atomic_init(&w.stop, 0);
  w.bad = 0;
  pthread_t thread;
  pthread_create(&thread, NULL, watch, &w);
  for (int i = 0; i < 50; ++i)
    if (sumOn(t, "allreduce beside a watchdog", t->comm, 1) != t->nranks) break;
  atomic_store(&w.stop, 1);
  pthread_join(thread, NULL);
  if (w.bad) failed(t, "ncclCommGetAsyncError from a watchdog", "%d bad answers", w.bad);
}

void checkComms(TestCtx* t) {
  checkAbortDuringInit(t);
  checkWatchdog(t);
  checkSplit(t);
  checkGroupCreation(t);
  ncclUniqueId ids[2];
  shareId(t, &ids[0]);
  ids[1] = ids[0];
  ncclComm_t scalable = NULL;
  if (EXPECT_OK(t, "ncclCommInitRankScalable",
                ncclCommInitRankScalable(&scalable, t->nranks, t->rank, 2, ids, NULL))) {
    if (sumOn(t, "allreduce on a scalable init", scalable, 2) != 2 * t->nranks)
      failed(t, "allreduce on a scalable init", "wrong sum");
    ncclCommDestroy(scalable);
  }
}

void checkShrink(TestCtx* t) {
  ncclComm_t dup = NULL, small = NULL;
  ncclConfig_t blocking = NCCL_CONFIG_INITIALIZER;
  blocking.blocking = 1;
  if (!split(t, "ncclCommSplit (dup)", t->comm, 0, t->rank, &dup, &blocking)) return;
  int last = t->nranks - 1;
  if (EXPECT_OK(t, "ncclCommShrink",
                ncclCommShrink(dup, &last, 1, &small, NULL, NCCL_SHRINK_ABORT))) {
    if ((small == NULL) != (t->rank == last))
      failed(t, "ncclCommShrink", "newcomm %p on rank %d", (void*)small, t->rank);
    if (small != NULL) {
      if (sumOn(t, "allreduce on a shrunk comm", small, 1) != t->nranks - 1)
        failed(t, "allreduce on a shrunk comm", "wrong sum");
      EXPECT_OK(t, "ncclCommDestroy(shrunk)", ncclCommDestroy(small));
    }
  }
  int v = 1;
  ncclResult_t r = ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, dup, NULL);
  if (r == ncclSuccess) failed(t, "allreduce on a revoked comm", "succeeded");
  EXPECT_OK(t, "ncclCommAbort(revoked)", ncclCommAbort(dup));
  /* The world: revoked, then a call fails at once naming it; then aborted. */
  EXPECT_OK(t, "ncclCommRevoke", ncclCommRevoke(t->comm, NCCL_REVOKE_DEFAULT));
  r = ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, t->comm, NULL);
  if (expectResult(t, "allreduce after revoke", r, ncclInvalidUsage) &&
      strstr(ncclGetLastError(t->comm), "revoked") == NULL)
    failed(t, "allreduce after revoke", "\"%s\"", ncclGetLastError(t->comm));
  EXPECT_OK(t, "ncclCommAbort", ncclCommAbort(t->comm));
  EXPECT_OK(t, "ncclCommAbort(NULL)", ncclCommAbort(NULL));
}
