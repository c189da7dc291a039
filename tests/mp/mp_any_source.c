/* Receives from any source (weftRecvAny), run by weft-run with 2+ ranks. In
 * each of ROUNDS rounds every rank but 0 sends one message to rank 0 after a
 * pause that depends on its rank and the round (so arrivals interleave
 * differently), then all ranks meet in a barrier; rank 0 takes the round's
 * messages with weftRecvAny (every third with weftRecvAnyAsync) and checks
 * that each payload is the one its reported source sent and that every
 * source is heard once per round. A sender that is already in the barrier
 * has a collective's header waiting at rank 0, which a receive from any
 * source must pass over. Odd rounds send more than the 32 KiB that travel
 * with the size header. Then the refusals (a NULL source, inside a group),
 * a named receive and an allreduce: the byte streams are still in step.
 * Prints "PASS" on rank 0; exits 1 on any FAIL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

#define ROUNDS 30
#define SMALL 7
#define LARGE (100 * 1024 + 3)

static int failures = 0;

static void fail(int rank, const char* what, const char* detail) {
  printf("FAIL rank %d: %s: %s\n", rank, what, detail);
  failures++;
}

static size_t countOf(int round) { return round % 2 == 0 ? SMALL : LARGE; }

static void fill(int32_t* buf, size_t count, int sender, int round) {
  for (size_t i = 0; i < count; ++i) buf[i] = sender * 1000000 + round * 1000 + (int32_t)(i % 997);
}

/* Rank 0's part of one round. */
static void receiveRound(weftComm_t comm, int nranks, int round, int32_t* buf, int32_t* want) {
  const size_t count = countOf(round);
  char heard[256] = {0};
  char text[200];
  for (int k = 1; k < nranks; ++k) {
    int source = -1;
    weftResult_t r;
    if ((round + k) % 3 == 0) {
      weftRequest_t req = NULL;
      r = weftRecvAnyAsync(buf, count, weftInt32, &source, comm, &req);
      if (r == weftSuccess) r = weftWait(&req);
    } else {
      r = weftRecvAny(buf, count, weftInt32, &source, comm);
    }
    if (r != weftSuccess) {
      fail(0, "weftRecvAny", weftGetLastError(comm));
      return;
    }
    if (source < 1 || source >= nranks || heard[source]) {
      snprintf(text, sizeof(text), "round %d: source %d (heard before: %d)", round, source,
               source >= 1 && source < nranks ? heard[source] : -1);
      fail(0, "weftRecvAny's source", text);
      continue;
    }
    heard[source] = 1;
    fill(want, count, source, round);
    if (memcmp(buf, want, count * sizeof(int32_t)) != 0) {
      snprintf(text, sizeof(text), "round %d: the message from rank %d has other contents", round,
               source);
      fail(0, "payload", text);
    }
  }
}

static void checkAfter(weftComm_t comm, int rank, int nranks, int32_t* buf) {
  int source = 0;
  if (rank == 0) {
    if (weftRecvAny(buf, 1, weftInt32, NULL, comm) != weftInvalidArgument)
      fail(0, "a NULL source", "accepted");
    weftGroupStart();
    weftResult_t r = weftRecvAny(buf, 1, weftInt32, &source, comm);
    char why[200];
    snprintf(why, sizeof(why), "%s", weftGetLastError(comm));
    weftGroupEnd();
    if (r != weftInvalidUsage || strstr(why, "group") == NULL) fail(0, "in a group", why);
    if (weftRecv(buf, 3, weftInt32, nranks - 1, comm, NULL) != weftSuccess ||
        buf[0] != 42 + nranks || buf[2] != 44 + nranks)
      fail(0, "a named receive after them", weftGetLastError(comm));
  } else if (rank == nranks - 1) {
    int32_t m[3] = {42 + nranks, 43 + nranks, 44 + nranks};
    if (weftSend(m, 3, weftInt32, 0, comm, NULL) != weftSuccess)
      fail(rank, "send", weftGetLastError(comm));
  }
  int32_t one = 1, sum = 0;
  if (weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm, NULL) != weftSuccess || sum != nranks)
    fail(rank, "allreduce after", weftGetLastError(comm));
}

/* --peer-dies: every other rank exits at once; rank 0's receive from any
 * source must fail within 5 s (not WEFT_TIMEOUT) and name a dead rank. */
static int peerDies(weftComm_t comm, int rank) {
  if (rank != 0) _exit(0);
  struct timespec a, b;
  int source = -1, value = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  weftResult_t r = weftRecvAny(&value, 1, weftInt32, &source, comm);
  clock_gettime(CLOCK_MONOTONIC, &b);
  const double took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  const char* why = weftGetLastError(comm);
  if (r == weftSuccess || took > 5.0 || strstr(why, "rank") == NULL)
    fail(0, "a receive from any source while the others die", why);
  else
    printf("PASS failed after %.3f s: %s\n", took, why);
  weftCommAbort(comm);
  return failures > 0;
}

int main(int argc, char** argv) {
  weftComm_t comm = NULL;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    printf("FAIL: init: %s\n", weftGetLastError(NULL));
    return 1;
  }
  int rank = 0, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  if (argc > 1 && strcmp(argv[1], "--peer-dies") == 0) return peerDies(comm, rank);
  int32_t* buf = calloc(LARGE, sizeof(int32_t));
  int32_t* want = calloc(LARGE, sizeof(int32_t));
  for (int round = 0; round < ROUNDS && failures == 0; ++round) {
    if (rank == 0) {
      receiveRound(comm, nranks, round, buf, want);
    } else {
      usleep((useconds_t)(((rank * 7 + round * 3) % 5) * 300));
      fill(buf, countOf(round), rank, round);
      if (weftSend(buf, countOf(round), weftInt32, 0, comm, NULL) != weftSuccess)
        fail(rank, "send", weftGetLastError(comm));
    }
    if (weftBarrier(comm, NULL) != weftSuccess) fail(rank, "barrier", weftGetLastError(comm));
  }
  if (failures == 0) checkAfter(comm, rank, nranks, buf);
  if (rank == 0 && failures == 0) printf("PASS %d rounds from %d senders\n", ROUNDS, nranks - 1);
  free(buf);
  free(want);
  weftCommDestroy(comm);
  return failures > 0;
}
