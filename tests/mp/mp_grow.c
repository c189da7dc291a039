/* weftCommGrow, as a job uses it. Ids travel out of band through files, as a
 * launcher would hand them to processes outside the communicator.
 *   --grow     (4 ranks): ranks 0 and 1 form a communicator; 2 and 3 join it.
 *              First rank 1 refuses its arguments: both fail at once.
 *   --replace  (5 ranks): ranks 0..3 are the job, rank 4 a standby that waits.
 *              Rank 1 dies; the survivors shrink, then grow back to 4 with
 *              the standby taking rank 1, so every rank keeps its number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <weft/weft.h>

#include "mp_check.h"

static int me;
static char dir[128];

static void putId(const char* name, const weftUniqueId* id) {
  char text[WEFT_UNIQUE_ID_STRLEN], path[256], tmp[260];
  weftUniqueIdToString(id, text, sizeof(text));
  mkdir(dir, 0700);
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  CHECK(f != NULL, "cannot write %s", tmp);
  fputs(text, f);
  fclose(f);
  CHECK(rename(tmp, path) == 0, "cannot rename %s", tmp);
}

static weftUniqueId getId(const char* name) {
  char path[256], text[WEFT_UNIQUE_ID_STRLEN + 1];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  for (int i = 0; i < 120000; ++i) { /* 120 s */
    FILE* f = fopen(path, "r");
    if (f != NULL) {
      size_t n = fread(text, 1, WEFT_UNIQUE_ID_STRLEN - 1, f);
      fclose(f);
      text[n] = '\0';
      weftUniqueId id;
      CHECK(weftUniqueIdFromString(text, &id) == weftSuccess, "bad id in %s", path);
      return id;
    }
    usleep(1000);
  }
  CHECK(0, "no %s after 120 s", path);
  weftUniqueId none;
  return none;
}

static weftComm_t initFromFile(const char* name, int nranks, int rank) {
  weftUniqueId id;
  if (rank == 0) {
    CHECK(weftGetUniqueId(&id) == weftSuccess, "weftGetUniqueId");
    putId(name, &id);
  } else {
    id = getId(name);
  }
  weftComm_t comm;
  CHECK(weftCommInitRank(&comm, nranks, id, rank) == weftSuccess, "init %s", name);
  return comm;
}

static int sum(weftComm_t comm, int mine) {
  int v = mine;
  CHECK(weftAllReduce(&v, &v, 1, weftInt, weftSum, comm, WEFT_STREAM_HOST) == weftSuccess,
        "allreduce");
  return v;
}

/* Rank 0 of comm makes the id and publishes it; comm broadcasts it. */
static weftUniqueId shareNewId(weftComm_t comm, const char* name) {
  weftUniqueId id;
  int rank;
  weftCommUserRank(comm, &rank);
  if (rank == 0) {
    CHECK(weftGetUniqueId(&id) == weftSuccess, "weftGetUniqueId");
    putId(name, &id);
  }
  CHECK(weftBcast(&id, sizeof(id), weftUint8, 0, comm, WEFT_STREAM_HOST) == weftSuccess, "bcast");
  return id;
}

static void checkGrown(weftComm_t big, int want) {
  int rank = -1, count = 0;
  weftCommUserRank(big, &rank);
  weftCommCount(big, &count);
  CHECK(rank == want && count == 4, "grown communicator: rank %d of %d, expected %d of 4", rank,
        count, want);
  CHECK(sum(big, rank) == 6, "allreduce of the ranks on the grown communicator");
  weftCommDestroy(big);
}

static void growTest(void) {
  weftComm_t big = NULL;
  if (me >= 2) { /* joining */
    weftUniqueId id = getId("grow");
    CHECK(weftCommGrow(NULL, 4, id, me, &big) == weftSuccess, "joining grow");
    checkGrown(big, me);
    return;
  }
  weftComm_t pair = initFromFile("pair", 2, me);
  /* Rank 1 refuses (nranks below its size): both fail at once, no one hangs. */
  weftUniqueId bogus;
  memset(&bogus, 0, sizeof(bogus));
  weftResult_t r = weftCommGrow(pair, me == 1 ? 1 : 4, bogus, -1, &big);
  CHECK(r == (me == 1 ? weftInvalidArgument : weftInvalidUsage), "refused grow returned %d", r);
  CHECK(me == 1 || strstr(weftGetLastError(NULL), "rank 1 refused") != NULL, "names rank 1");
  CHECK(sum(pair, 1) == 2, "the communicator works after a refused grow");
  weftUniqueId id = shareNewId(pair, "grow");
  CHECK(weftCommGrow(pair, 4, id, -1, &big) == weftSuccess, "grow");
  checkGrown(big, me);
  weftCommDestroy(pair);
}

static void replaceTest(void) {
  weftComm_t full = NULL;
  if (me == 4) { /* the standby: waits, costing nothing, until it is needed */
    weftUniqueId id = getId("replace");
    CHECK(weftCommGrow(NULL, 4, id, 1, &full) == weftSuccess, "standby's grow");
    checkGrown(full, 1);
    return;
  }
  weftComm_t job = initFromFile("job", 4, me);
  CHECK(sum(job, 1) == 4, "the job's allreduce");
  if (me == 1) _exit(0); /* dies */
  int v = 1;
  CHECK(weftAllReduce(&v, &v, 1, weftInt, weftSum, job, WEFT_STREAM_HOST) != weftSuccess,
        "an allreduce with a dead rank failed");
  int dead = 1;
  weftComm_t small = NULL;
  CHECK(weftCommShrink(job, &dead, 1, &small) == weftSuccess, "shrink");
  weftUniqueId id = shareNewId(small, "replace");
  CHECK(weftCommGrow(small, 4, id, me, &full) == weftSuccess, "survivor's grow");
  checkGrown(full, me);
  weftCommDestroy(small);
  weftCommAbort(job);
}

int main(int argc, char** argv) {
  const char* rank = getenv("WEFT_RANK");
  const char* id = getenv("WEFT_UNIQUE_ID");
  if (argc < 2 || rank == NULL || id == NULL) {
    fprintf(stderr, "usage (under weft-run): mp_grow --grow|--replace\n");
    return 2;
  }
  me = atoi(rank);
  static char name[32];
  snprintf(name, sizeof(name), "rank %d", me);
  who = name;
  /* One folder per job: named by a hash of the whole id (its first bytes are
   * the same for every job). */
  unsigned long long h = 1469598103934665603ull;
  for (const char* c = id; *c; ++c) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  snprintf(dir, sizeof(dir), "/tmp/weft-grow-%016llx", h);
  if (strcmp(argv[1], "--grow") == 0) growTest();
  if (strcmp(argv[1], "--replace") == 0) replaceTest();
  if (me == 0) { /* every id was read before the last collective */
    const char* names[] = {"pair", "grow", "job", "replace"};
    char path[256];
    for (int i = 0; i < 4; ++i) {
      snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
      unlink(path);
    }
    rmdir(dir);
  }
  printf("rank %d: passed\n", me);
  return 0;
}
