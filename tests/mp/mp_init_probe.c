/* One rank of the init-death trials (init_kill_test.py): joins a job from the
 * environment, then runs small allreduces for MP_PROBE_SECONDS (default 2) so
 * that a death at any moment of the trial meets a live call. Prints "START"
 * as it calls init, then one line: "INIT-FAIL <code>: <sentence>",
 * "CALL-FAIL <code>: <sentence>" or "OK". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft/weft.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void printFailedAt(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  printf("FAILED-AT %.3f\n", ts.tv_sec + ts.tv_nsec * 1e-9);
}

int main(void) {
  weftComm_t comm = NULL;
  printf("START\n");
  fflush(stdout);
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r != weftSuccess) {
    printFailedAt();
    printf("INIT-FAIL %s: %s\n", weftGetErrorString(r), weftGetLastError(NULL));
    return 1;
  }
  const char* s = getenv("MP_PROBE_SECONDS");
  const double until = now() + (s ? atof(s) : 2.0);
  /* Every rank stops after the same call: the one where any rank's time ran out. */
  for (;;) {
    float x[2] = {1.0f, now() >= until ? 1.0f : 0.0f};
    r = weftAllReduce(x, x, 2, weftFloat32, weftSum, comm, NULL);
    if (r != weftSuccess) {
      printFailedAt();
      printf("CALL-FAIL %s: %s\n", weftGetErrorString(r), weftGetLastError(comm));
      weftCommAbort(comm);
      return 1;
    }
    if (x[1] > 0.0f) break;
  }
  weftCommDestroy(comm);
  printf("OK\n");
  return 0;
}
