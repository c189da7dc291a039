/* Replicas with standby ranks, as a training job uses them under weft-run:
 * every rank's state (doubles) advances one step at a time from what an
 * allreduce returns, and is committed after each step (version = steps + 1).
 * Ranks die with SIGKILL; the survivors replace them with standbys and every
 * rank restores; at the end every rank's state must equal, bitwise, the
 * state of a run without the failure (computed here from the same formula).
 *   --kill SEED       one rank dies, at a step and a point (before the
 *                     step, during its commit, after it) drawn from SEED
 *   --two             ranks 1 and 2 die at once, copies 2, two standbys
 *   --lost            ranks 1 and 2 die, copies 1, two standbys: rank 1's
 *                     only copy was on rank 2, so the restore refuses alike
 *                     on every rank, standbys included
 *   --short           ranks 1 and 2 die, one standby: the job goes on
 *                     shrunk, and the restore refuses (it needs every place)
 *   --standby-dies M  the first standby to join dies before the restore
 *                     (M: a marker file, removed at start); the survivors
 *                     replace it with the second standby
 * Options: --during-commit (the death falls in a commit, whatever the seed),
 * --ask (survivors pass no dead ranks: the pool says which died),
 * --fork-child (each rank forks an idle child first, which the caller kills),
 * --bytes N (per rank, default 1 MiB), --steps K (default 12),
 * --copies C, --timing F: the victim writes its kill time (CLOCK_MONOTONIC)
 * to F, and rank 0 prints the time from it to the first allreduce after the
 * restore ("recovery_s"). */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft/weft.h>

#include "mp_check.h"

static char whoName[32];

enum { kBefore = 0, kDuringCommit = 1, kAfterCommit = 2 };

struct Options {
  const char* mode;
  unsigned seed;
  const char* marker;
  const char* timing;
  size_t bytes;
  int steps;
  int copies;
  int nDead;
  int dead[2];
  int killStep;
  int killPoint;
  int forceCommit;
  int ask;       /* survivors ask the launcher's pool which ranks died */
  int forkChild; /* each rank forks a child that outlives it (holding its descriptors) */
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The state of `rank` at step 0, and one step: deterministic, so a run
 * without failure is this same formula. */
static void initState(double* s, size_t n, int rank) {
  for (size_t i = 0; i < n; ++i) s[i] = rank * 1000.0 + (double)(i % 977);
}
static void stepState(double* s, size_t n, double shared, int step) {
  for (size_t i = 0; i < n; ++i) s[i] = s[i] * 0.999 + shared * 1e-3 + (double)((i + step) % 7);
}
/* What the step's allreduce returns with every rank alive: sum over ranks. */
static double stepInput(int rank, int step) { return rank + 0.5 * step; }

static void parse(int argc, char** argv, struct Options* o) {
  memset(o, 0, sizeof(*o));
  o->bytes = 1 << 20;
  o->steps = 12;
  o->copies = 1;
  o->mode = argc > 1 ? argv[1] : "--kill";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--kill") == 0 && i + 1 < argc) o->seed = (unsigned)atoi(argv[++i]);
    if (strcmp(argv[i], "--standby-dies") == 0 && i + 1 < argc) o->marker = argv[++i];
    if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) o->bytes = (size_t)atoll(argv[++i]);
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) o->steps = atoi(argv[++i]);
    if (strcmp(argv[i], "--copies") == 0 && i + 1 < argc) o->copies = atoi(argv[++i]);
    if (strcmp(argv[i], "--timing") == 0 && i + 1 < argc) o->timing = argv[++i];
    if (strcmp(argv[i], "--during-commit") == 0) o->forceCommit = 1;
    if (strcmp(argv[i], "--ask") == 0) o->ask = 1;
    if (strcmp(argv[i], "--fork-child") == 0) o->forkChild = 1;
  }
  o->bytes -= o->bytes % sizeof(double);
  if (o->steps < 3) o->steps = 3;
}

/* Which ranks die, when, of `nranks`. */
static void drawFailure(struct Options* o, int nranks) {
  srand(o->seed);
  o->killStep = 1 + rand() % (o->steps - 2); /* a later step sees the death */
  o->killPoint = o->forceCommit ? kDuringCommit : rand() % 3;
  o->nDead = 1;
  o->dead[0] = rand() % nranks;
  if (strcmp(o->mode, "--two") == 0 || strcmp(o->mode, "--short") == 0 ||
      strcmp(o->mode, "--lost") == 0) {
    o->nDead = 2;
    o->dead[0] = 1;
    o->dead[1] = 2;
    if (strcmp(o->mode, "--two") == 0) o->copies = 2;
  }
  if (strcmp(o->mode, "--standby-dies") == 0) o->dead[0] = 1;
}

static int isDead(const struct Options* o, int rank) {
  for (int i = 0; i < o->nDead; ++i)
    if (o->dead[i] == rank) return 1;
  return 0;
}

static void dieNow(const struct Options* o) {
  printf("%s: dying (SIGKILL)\n", who);
  fflush(stdout);
  if (o->timing != NULL) {
    FILE* f = fopen(o->timing, "w");
    if (f != NULL) {
      fprintf(f, "%.9f\n", now());
      fclose(f);
    }
  }
  raise(SIGKILL);
}

struct Job {
  weftComm_t comm;
  weftReplica_t replica;
  double* state;
  size_t n;
  int rank;
  int nranks;
  int original; /* 0: a standby that took a dead rank's place (it does not die again) */
};

static int diesHere(const struct Job* j, const struct Options* o, int step, int point) {
  return j->original && isDead(o, j->rank) && step == o->killStep && point == o->killPoint;
}

/* Steps [from, steps); 0 when all are done, else 1: a call failed (a peer died). */
static int runSteps(struct Job* j, const struct Options* o, int from) {
  for (int step = from; step < o->steps; ++step) {
    if (diesHere(j, o, step, kBefore)) dieNow(o);
    double x = stepInput(j->rank, step);
    if (weftAllReduce(&x, &x, 1, weftDouble, weftSum, j->comm, WEFT_STREAM_HOST) != weftSuccess)
      return 1;
    stepState(j->state, j->n, x, step);
    weftRequest_t req = NULL;
    if (weftReplicaCommit(j->replica, &req) != weftSuccess) return 1;
    if (diesHere(j, o, step, kDuringCommit)) dieNow(o);
    if (weftWait(&req) != weftSuccess) return 1;
    if (diesHere(j, o, step, kAfterCommit)) dieNow(o);
  }
  return 0;
}

/* The first collective after a restore; rank 0 reports the time since the kill. */
static void firstAfterRestore(const struct Job* j, const struct Options* o, uint64_t version) {
  int one = 1;
  CHECK(weftAllReduce(&one, &one, 1, weftInt, weftSum, j->comm, WEFT_STREAM_HOST) == weftSuccess &&
            one == j->nranks,
        "the first allreduce after the restore");
  if (j->rank != 0) return;
  double killed = 0;
  FILE* f = o->timing != NULL ? fopen(o->timing, "r") : NULL;
  if (f != NULL && fscanf(f, "%lf", &killed) == 1)
    printf("recovery_s %.4f (version %llu)\n", now() - killed, (unsigned long long)version);
  if (f != NULL) fclose(f);
}

/* Every rank's state equals a run without failure, bitwise. */
static void checkFinal(const struct Job* j, const struct Options* o) {
  double* want = malloc(j->n * sizeof(double));
  CHECK(want != NULL, "malloc");
  initState(want, j->n, j->rank);
  for (int step = 0; step < o->steps; ++step) {
    double shared = 0;
    for (int r = 0; r < j->nranks; ++r) shared += stepInput(r, step);
    stepState(want, j->n, shared, step);
  }
  CHECK(memcmp(want, j->state, j->n * sizeof(double)) == 0,
        "the final state differs from a run without failure");
  free(want);
}

static void finish(struct Job* j, const struct Options* o, uint64_t version) {
  firstAfterRestore(j, o, version);
  CHECK(runSteps(j, o, (int)version - 1) == 0, "the steps after the restore");
  checkFinal(j, o);
  printf("%s: resumed from version %llu, final state equal to a run without failure\n", who,
         (unsigned long long)version);
  /* Either order is allowed (a replica may outlive its communicator, whose
   * destruction drops the replica's RDMA registrations): odd ranks try one. */
  if (j->rank % 2 == 1) {
    CHECK(weftCommDestroy(j->comm) == weftSuccess, "weftCommDestroy");
    CHECK(weftReplicaDeregister(j->replica) == weftSuccess, "weftReplicaDeregister");
  } else {
    CHECK(weftReplicaDeregister(j->replica) == weftSuccess, "weftReplicaDeregister");
    CHECK(weftCommDestroy(j->comm) == weftSuccess, "weftCommDestroy");
  }
}

/* The state's memory: a standby makes it while it waits, off the recovery's path. */
static void allocState(struct Job* j, const struct Options* o) {
  j->n = o->bytes / sizeof(double);
  CHECK(weftHostAlloc((void**)&j->state, o->bytes) == weftSuccess, "weftHostAlloc");
}

static void startJob(struct Job* j, const struct Options* o, weftComm_t comm, int original) {
  j->comm = comm;
  j->original = original;
  weftCommUserRank(comm, &j->rank);
  weftCommCount(comm, &j->nranks);
  if (j->state == NULL) allocState(j, o);
  CHECK(weftReplicaRegister(comm, j->state, o->bytes, o->copies, &j->replica) == weftSuccess,
        "weftReplicaRegister");
}

/* A restore that must refuse alike on every rank: weftInvalidUsage naming `why`. */
static void expectRefusal(weftResult_t r, const char* why) {
  CHECK(r == weftInvalidUsage && strstr(weftGetLastError(NULL), why) != NULL,
        "the restore refuses with \"%s\" (got %d)", why, r);
  printf("%s: restore refused as expected: %s\n", who, weftGetLastError(NULL));
}

static int standbyMain(struct Options* o) {
  who = "standby";
  struct Job j;
  memset(&j, 0, sizeof(j));
  allocState(&j, o);
  weftComm_t comm = NULL;
  weftResult_t r = weftStandbyWait(&comm);
  if (strcmp(o->mode, "--short") == 0 || r == weftInvalidUsage) {
    CHECK(r == weftInvalidUsage, "an unneeded standby returns when the job ends (got %d)", r);
    printf("standby: not needed, returned when the job ended\n");
    return 0;
  }
  CHECK(r == weftSuccess, "weftStandbyWait");
  int rank = -1, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  drawFailure(o, nranks);
  snprintf(whoName, sizeof(whoName), "standby as rank %d", rank);
  who = whoName;
  startJob(&j, o, comm, 0);
  if (o->marker != NULL && open(o->marker, O_CREAT | O_EXCL | O_WRONLY, 0600) >= 0) {
    printf("%s: dying before the restore\n", who);
    fflush(stdout);
    raise(SIGKILL);
  }
  uint64_t version = 0;
  r = weftReplicaRestore(j.replica, comm, &version);
  if (strcmp(o->mode, "--lost") == 0) {
    expectRefusal(r, "is lost");
    return 0;
  }
  CHECK(r == weftSuccess, "weftReplicaRestore");
  finish(&j, o, version);
  return 0;
}

/* After a failure: replace the dead ranks with standbys and restore. */
static void survive(struct Job* j, const struct Options* o) {
  weftComm_t old = j->comm;
  weftComm_t next = NULL;
  int replaced = -1;
  const double t0 = now();
  CHECK(weftCommReplace(old, o->ask ? NULL : o->dead, o->ask ? 0 : o->nDead, &next, &replaced) ==
            weftSuccess,
        "weftCommReplace");
  const double t1 = now();
  uint64_t version = 0;
  weftResult_t r = weftReplicaRestore(j->replica, next, &version);
  if (o->timing != NULL) printf("%s: replace %.4f s, restore %.4f s\n", who, t1 - t0, now() - t1);
  if (strcmp(o->mode, "--short") == 0) {
    CHECK(replaced == 0, "replaced %d with one standby for two dead ranks", replaced);
    expectRefusal(r, "registered on 4 ranks");
    int one = 1;
    CHECK(weftAllReduce(&one, &one, 1, weftInt, weftSum, next, WEFT_STREAM_HOST) == weftSuccess &&
              one == 2,
          "the shrunk communicator still works");
    weftCommDestroy(next);
    weftCommAbort(old);
    return;
  }
  CHECK(replaced == o->nDead, "replaced %d of %d dead ranks", replaced, o->nDead);
  if (strcmp(o->mode, "--lost") == 0) {
    expectRefusal(r, "is lost");
    weftCommDestroy(next);
    weftCommAbort(old);
    return;
  }
  if (o->marker != NULL) {  // the standby that took rank 1 died: replace it too
    CHECK(r != weftSuccess, "the restore fails when the joining standby dies");
    printf("%s: restore failed as the standby died: %s\n", who, weftGetLastError(NULL));
    weftComm_t again = NULL;
    CHECK(weftCommReplace(next, o->ask ? NULL : o->dead, o->ask ? 0 : 1, &again, &replaced) ==
                  weftSuccess &&
              replaced == 1,
          "the second weftCommReplace");
    weftCommAbort(next);
    next = again;
    r = weftReplicaRestore(j->replica, next, &version);
  }
  CHECK(r == weftSuccess, "weftReplicaRestore");
  weftCommAbort(old);
  j->comm = next;
  finish(j, o, version);
}

int main(int argc, char** argv) {
  struct Options o;
  parse(argc, argv, &o);
  int standby = 0; /* weft-run --standby, or the launcher's last WEFT_STANDBYS processes */
  CHECK(weftStandbyLaunched(&standby) == weftSuccess, "weftStandbyLaunched");
  if (standby) return standbyMain(&o);
  weftComm_t comm = NULL;
  CHECK(weftCommInitFromEnv(&comm) == weftSuccess, "init");
  struct Job j;
  memset(&j, 0, sizeof(j));
  int nranks = 0;
  weftCommCount(comm, &nranks);
  drawFailure(&o, nranks);
  startJob(&j, &o, comm, 1);
  snprintf(whoName, sizeof(whoName), "rank %d", j.rank);
  who = whoName;
  if (o.forkChild) { /* as a data loader's workers: forked, no exec, idle until killed */
    fflush(stdout);
    const pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0)
      for (;;) pause();
    printf("%s: forked child %d\n", who, (int)child);
    fflush(stdout);
  }
  if (j.rank == 0) {
    char dead[32];
    if (o.nDead > 1)
      snprintf(dead, sizeof(dead), "ranks %d and %d die", o.dead[0], o.dead[1]);
    else
      snprintf(dead, sizeof(dead), "rank %d dies", o.dead[0]);
    printf("%s: %s at step %d, %s\n", o.mode, dead, o.killStep,
           o.killPoint == kBefore         ? "before it"
           : o.killPoint == kDuringCommit ? "during its commit"
                                          : "after its commit");
    if (o.marker != NULL) unlink(o.marker);
  }
  initState(j.state, j.n, j.rank);
  weftRequest_t req = NULL;
  CHECK(weftReplicaCommit(j.replica, &req) == weftSuccess && weftWait(&req) == weftSuccess,
        "the first commit (version 1: the state before any step)");
  CHECK(runSteps(&j, &o, 0) != 0, "a rank died, yet every call succeeded");
  printf("%s: saw the failure: %s\n", who, weftGetLastError(NULL));
  survive(&j, &o);
  return 0;
}
