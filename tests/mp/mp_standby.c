/* Standby ranks, as a job uses them under weft-run --standby K.
 *   --one   (4 ranks, 1 standby): rank 1 dies (SIGKILL); the survivors call
 *           weftCommReplace and the standby takes rank 1: every rank keeps
 *           its number, and the job's allreduce works again with 4 ranks.
 *   --short (4 ranks, 1 standby): ranks 1 and 2 die; one standby is not
 *           enough, so the survivors go on with the shrunk communicator, and
 *           the standby, never needed, returns when the job ends. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

#include "mp_check.h"

static int sum(weftComm_t comm, int mine) {
  int v = mine;
  CHECK(weftAllReduce(&v, &v, 1, weftInt, weftSum, comm, WEFT_STREAM_HOST) == weftSuccess,
        "allreduce");
  return v;
}

/* After a replacement: 4 ranks, each with its number, and a working allreduce. */
static void checkFull(weftComm_t full, int want) {
  int rank = -1, count = 0;
  weftCommUserRank(full, &rank);
  weftCommCount(full, &count);
  CHECK(rank == want && count == 4, "rank %d of %d after the replacement, expected %d of 4", rank,
        count, want);
  CHECK(sum(full, rank) == 6, "allreduce of the ranks after the replacement");
  weftCommDestroy(full);
}

int main(int argc, char** argv) {
  const int shortOfStandbys = argc > 1 && strcmp(argv[1], "--short") == 0;
  if (getenv("WEFT_STANDBY") != NULL) {
    who = "standby";
    weftComm_t comm = NULL;
    weftResult_t r = weftStandbyWait(&comm);
    if (shortOfStandbys) {
      CHECK(r == weftInvalidUsage && strstr(weftGetLastError(NULL), "ended") != NULL,
            "an unneeded standby returns when the job ends (got %d)", r);
      printf("standby: not needed, returned when the job ended\n");
      return 0;
    }
    CHECK(r == weftSuccess, "weftStandbyWait");
    checkFull(comm, 1);
    printf("standby: took rank 1, passed\n");
    return 0;
  }
  weftComm_t job = NULL;
  CHECK(weftCommInitFromEnv(&job) == weftSuccess, "init");
  int me = -1;
  weftCommUserRank(job, &me);
  static char name[32];
  snprintf(name, sizeof(name), "rank %d", me);
  who = name;
  CHECK(sum(job, 1) == 4, "the job's first allreduce");
  if (me == 1 || (shortOfStandbys && me == 2)) raise(SIGKILL);
  int v = 1;
  CHECK(weftAllReduce(&v, &v, 1, weftInt, weftSum, job, WEFT_STREAM_HOST) != weftSuccess,
        "an allreduce with a dead rank fails");
  int dead[2] = {1, 2};
  weftComm_t next = NULL;
  int replaced = -1;
  CHECK(weftCommReplace(job, dead, shortOfStandbys ? 2 : 1, &next, &replaced) == weftSuccess,
        "weftCommReplace");
  if (shortOfStandbys) {
    int count = 0;
    weftCommCount(next, &count);
    CHECK(replaced == 0 && count == 2, "replaced %d, %d ranks: expected the 2 survivors", replaced,
          count);
    CHECK(sum(next, 1) == 2, "allreduce of the survivors");
    weftCommDestroy(next);
  } else {
    CHECK(replaced == 1, "replaced %d ranks, expected 1", replaced);
    checkFull(next, me);
  }
  weftCommAbort(job);
  printf("%s: passed\n", who);
  return 0;
}
