/* Communicator-creating calls that one rank refuses (run by weft-run, 2+ ranks).
 * The last rank passes an argument it refuses to weftCommSplit (a negative
 * color, then a NULL newcomm) and to weftCommShrink (a rank that does not
 * exist); the others pass valid ones. Every rank must fail within LIMIT_S,
 * the others with a sentence naming the last rank and its argument; then a
 * valid call on every rank must succeed and pair with itself, not with the
 * refused one (an allreduce over the new communicator sums to nranks).
 * Prints "PASS <case> <ms>" per case on rank 0; exits 1 on any FAIL. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

#define LIMIT_S 1.0

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int failures = 0;

static void fail(int rank, const char* what, const char* detail) {
  printf("FAIL rank %d: %s: %s\n", rank, what, detail);
  failures++;
}

/* Checks one refused call's outcome on this rank. */
static void checkRefused(const char* name, weftResult_t r, double took, int rank, int refuser,
                         const char* argument) {
  char who[32];
  const char* text = weftGetLastError(NULL);
  snprintf(who, sizeof(who), "rank %d", refuser);
  if (r == weftSuccess) fail(rank, name, "succeeded although a rank refused");
  if (took > LIMIT_S) fail(rank, name, "took longer than the limit to fail");
  if (rank != refuser && (strstr(text, who) == NULL || strstr(text, argument) == NULL))
    fail(rank, name, text);
  if (rank == 0) printf("%s: rank 0 failed in %.0f ms: %s\n", name, took * 1e3, text);
}

/* The new communicator pairs the same call on every rank: a sum over it is n. */
static void checkPaired(const char* name, weftResult_t r, weftComm_t c, int rank, int n) {
  float x = 1.0f;
  if (r != weftSuccess || c == NULL) {
    fail(rank, name, weftGetLastError(NULL));
    return;
  }
  if (weftAllReduce(&x, &x, 1, weftFloat32, weftSum, c, NULL) != weftSuccess || x != (float)n)
    fail(rank, name, "the new communicator does not pair every rank");
  weftCommDestroy(c);
}

int main(void) {
  weftComm_t comm = NULL, child = NULL;
  int rank = 0, n = 0;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    printf("FAIL init: %s\n", weftGetLastError(NULL));
    return 1;
  }
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &n);
  const int last = n - 1;
  double t = now();
  weftResult_t r = weftCommSplit(comm, rank == last ? -5 : 0, rank, &child, NULL);
  checkRefused("split with color=-5", r, now() - t, rank, last, "color=-5");
  r = weftCommSplit(comm, 0, rank, &child, NULL);
  checkPaired("split after the refused one", r, child, rank, n);

  t = now();
  r = weftCommSplit(comm, 0, rank, rank == last ? NULL : &child, NULL);
  checkRefused("split with newcomm=NULL", r, now() - t, rank, last, "newcomm is NULL");
  r = weftCommSplit(comm, 0, rank, &child, NULL);
  checkPaired("split after the refused one", r, child, rank, n);

  const int bogus = n + 3;
  t = now();
  r = weftCommShrink(comm, rank == last ? &bogus : NULL, rank == last ? 1 : 0, &child);
  checkRefused("shrink with excludeRanks[0]=n+3", r, now() - t, rank, last, "excludeRanks[0]");
  r = weftCommShrink(comm, NULL, 0, &child);
  checkPaired("shrink after the refused one", r, child, rank, n);

  weftCommDestroy(comm);
  if (rank == 0 && failures == 0) printf("PASS: %d ranks\n", n);
  return failures ? 1 : 0;
}
