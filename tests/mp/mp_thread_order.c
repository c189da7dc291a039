/* Two threads of each rank calling allreduce on one communicator (run by
 * weft-run). Each thread's k-th call contributes (thread+1)*1000 + k, so a
 * call paired with another thread's call on a peer sums to the wrong value.
 *   race:    both threads call at once, retrying a call refused because the
 *            other thread is inside one; ranks may pair different threads'
 *            calls, which weft must report (a mismatch error) rather than
 *            return wrong sums with success on every call;
 *   handoff: thread 0 makes its calls, then thread 1 makes its own: the same
 *            order on every rank, which must just work;
 *   skew:    rank 0 makes 1 call from its main thread and 2 from a second
 *            thread, the others 2 and 1: the second call must fail on every
 *            rank with the thread-order mismatch.
 * Prints "RANK r wrong=W detected=D ok=K": W calls returned success with a
 * wrong sum, D calls failed with another error than the overlap refusal. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

enum { kThreads = 2 };

static weftComm_t comm;
static int nranks, calls = 300;
static int wrong, detected, ok;
static pthread_mutex_t countMu = PTHREAD_MUTEX_INITIALIZER;

static void* run(void* arg) {
  const int t = (int)(long)arg;
  for (int k = 0; k < calls; ++k) {
    const float mine = (float)((t + 1) * 1000 + k);
    float x = mine;
    weftResult_t r;
    for (;;) {
      r = weftAllReduce(&x, &x, 1, weftFloat32, weftSum, comm, NULL);
      if (r == weftInvalidUsage && strstr(weftGetLastError(NULL), "another thread is inside")) {
        x = mine;
        continue; /* refused before it started: try again */
      }
      break;
    }
    pthread_mutex_lock(&countMu);
    if (r != weftSuccess)
      detected++;
    else if (x != mine * nranks)
      wrong++;
    else
      ok++;
    pthread_mutex_unlock(&countMu);
    if (r != weftSuccess) {
      if (detected == 1) fprintf(stderr, "thread %d call %d: %s\n", t, k, weftGetLastError(NULL));
      break;
    }
  }
  return NULL;
}

static void* skewWorker(void* arg) {
  const int n = (int)(long)arg;
  float x = 1.0f;
  for (int k = 0; k < n; ++k) {
    weftResult_t r = weftAllReduce(&x, &x, 1, weftFloat32, weftSum, comm, NULL);
    pthread_mutex_lock(&countMu);
    if (r != weftSuccess && strstr(weftGetLastError(NULL), "threads call this communicator"))
      detected++;
    else if (r == weftSuccess)
      ok++;
    pthread_mutex_unlock(&countMu);
    if (r != weftSuccess) break;
  }
  return NULL;
}

/* Main thread, then a second thread, with the split point differing by rank. */
static void skew(int rank) {
  const int mainCalls = rank == 0 ? 1 : 2;
  pthread_t th;
  skewWorker((void*)(long)mainCalls);
  if (detected) return; /* the communicator is broken: the worker has nothing to show */
  pthread_create(&th, NULL, skewWorker, (void*)(long)(3 - mainCalls));
  pthread_join(th, NULL);
}

int main(int argc, char** argv) {
  const int handoff = argc > 1 && strcmp(argv[1], "handoff") == 0;
  int rank = 0;
  if (argc > 2) calls = atoi(argv[2]);
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    printf("FAIL init: %s\n", weftGetLastError(NULL));
    return 1;
  }
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  if (argc > 1 && strcmp(argv[1], "skew") == 0) {
    skew(rank);
    printf("RANK %d wrong=%d detected=%d ok=%d\n", rank, wrong, detected, ok);
    weftCommAbort(comm);
    return 0;
  }
  pthread_t th[kThreads];
  for (long t = 0; t < kThreads; ++t) {
    pthread_create(&th[t], NULL, run, (void*)t);
    if (handoff) pthread_join(th[t], NULL);
  }
  if (!handoff)
    for (int t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
  printf("RANK %d wrong=%d detected=%d ok=%d\n", rank, wrong, detected, ok);
  if (detected)
    weftCommAbort(comm);
  else
    weftCommDestroy(comm);
  return 0;
}
