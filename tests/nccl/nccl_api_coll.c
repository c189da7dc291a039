/* Collectives, rooted calls and point-to-point through the NCCL API, every
 * result compared with what NCCL defines. Inputs are small integers, so sums
 * and products are exact in every datatype used. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_api_test.h"

static size_t typeSize(ncclDataType_t dt) {
  switch (dt) {
    case ncclInt32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclFloat64:
      return 8;
    default:
      return 1;
  }
}

static void setVal(ncclDataType_t dt, void* buf, size_t i, double v) {
  switch (dt) {
    case ncclInt32:
      ((int32_t*)buf)[i] = (int32_t)v;
      break;
    case ncclInt64:
      ((int64_t*)buf)[i] = (int64_t)v;
      break;
    case ncclFloat32:
      ((float*)buf)[i] = (float)v;
      break;
    case ncclFloat64:
      ((double*)buf)[i] = v;
      break;
    default:
      ((uint8_t*)buf)[i] = (uint8_t)v;
      break;
  }
}

static double getVal(ncclDataType_t dt, const void* buf, size_t i) {
  switch (dt) {
    case ncclInt32:
      return ((const int32_t*)buf)[i];
    case ncclInt64:
      return (double)((const int64_t*)buf)[i];
    case ncclFloat32:
      return ((const float*)buf)[i];
    case ncclFloat64:
      return ((const double*)buf)[i];
    default:
      return ((const uint8_t*)buf)[i];
  }
}

static double input(int rank, size_t i) { return (double)(rank + 1 + (int)(i % 5)); }

static double reduced(ncclRedOp_t op, ncclDataType_t dt, int nranks, size_t i) {
  double acc = input(0, i);
  for (int r = 1; r < nranks; ++r) {
    double v = input(r, i);
    if (op == ncclSum || op == ncclAvg) acc += v;
    if (op == ncclProd) acc *= v;
    if (op == ncclMax) acc = v > acc ? v : acc;
    if (op == ncclMin) acc = v < acc ? v : acc;
  }
  if (op == ncclAvg)
    acc = (dt == ncclInt32 || dt == ncclInt64) ? floor(acc / nranks) : acc / nranks;
  return acc;
}

/* A device (or host) buffer of count elements holding input(rank, i). */
static void* inputBuf(ncclDataType_t dt, size_t count, int rank) {
  void* host = malloc(count * typeSize(dt) + 1);
  for (size_t i = 0; i < count; ++i) setVal(dt, host, i, input(rank, i));
  void* dev = bufAlloc(count * typeSize(dt));
  bufPut(dev, host, count * typeSize(dt));
  free(host);
  return dev;
}

/* Compares count elements of dev with want(i); one line for the first miss. */
typedef double (*Want)(const void* arg, size_t i);
static void compare(TestCtx* t, const char* what, ncclDataType_t dt, const void* dev, size_t count,
                    Want want, const void* arg) {
  void* host = malloc(count * typeSize(dt) + 1);
  streamSync(t);
  bufGet(host, dev, count * typeSize(dt));
  for (size_t i = 0; i < count; ++i) {
    double got = getVal(dt, host, i), w = want(arg, i);
    if (fabs(got - w) > 1e-5 * fabs(w)) {
      failed(t, what, "element %zu is %g, expected %g", i, got, w);
      break;
    }
  }
  free(host);
}

typedef struct {
  ncclRedOp_t op;
  ncclDataType_t dt;
  int nranks;
  size_t offset;
  int rank;
} Spec;
static double wantReduced(const void* arg, size_t i) {
  const Spec* s = (const Spec*)arg;
  return reduced(s->op, s->dt, s->nranks, i + s->offset);
}
static double wantInputOf(const void* arg, size_t i) {
  const Spec* s = (const Spec*)arg;
  return input(s->rank, i);
}
/* Block b of an allgather / all-to-all receive: rank b's input (offset: the element in it). */
static double wantGathered(const void* arg, size_t i) {
  const Spec* s = (const Spec*)arg;
  return input((int)(i / s->offset),
               i % s->offset + (s->rank >= 0 ? (size_t)s->rank * s->offset : 0));
}

void checkCollectives(TestCtx* t) {
  const ncclDataType_t types[] = {ncclFloat32, ncclInt32, ncclFloat64, ncclInt64};
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  const size_t n = 1000;
  for (int k = 0; k < 4; ++k) {
    for (int o = 0; o < 5; ++o) {
      void* in = inputBuf(types[k], n, t->rank);
      void* out = bufAlloc(n * typeSize(types[k]));
      char what[64];
      snprintf(what, sizeof(what), "ncclAllReduce type %d op %d", (int)types[k], (int)ops[o]);
      Spec s = {ops[o], types[k], t->nranks, 0, t->rank};
      if (EXPECT_OK(t, what, ncclAllReduce(in, out, n, types[k], ops[o], t->comm, t->stream)))
        compare(t, what, types[k], out, n, wantReduced, &s);
      bufRelease(t, in);
      bufRelease(t, out);
    }
  }
  Spec sum = {ncclSum, ncclFloat32, t->nranks, 0, t->rank};
  void* io = inputBuf(ncclFloat32, n, t->rank);
  if (EXPECT_OK(t, "ncclAllReduce in place",
                ncclAllReduce(io, io, n, ncclFloat32, ncclSum, t->comm, t->stream)))
    compare(t, "ncclAllReduce in place", ncclFloat32, io, n, wantReduced, &sum);
  bufRelease(t, io);

  const int root = t->nranks - 1;
  void* in = inputBuf(ncclFloat32, 777, t->rank);
  void* out = bufAlloc(777 * 4);
  if (EXPECT_OK(t, "ncclReduce",
                ncclReduce(in, out, 777, ncclFloat32, ncclSum, root, t->comm, t->stream)) &&
      t->rank == root)
    compare(t, "ncclReduce", ncclFloat32, out, 777, wantReduced, &sum);
  bufRelease(t, in);
  bufRelease(t, out);

  const size_t block = 300;
  in = inputBuf(ncclInt32, block * t->nranks, t->rank);
  out = bufAlloc(block * 4);
  Spec rs = {ncclSum, ncclInt32, t->nranks, block * t->rank, t->rank};
  if (EXPECT_OK(t, "ncclReduceScatter",
                ncclReduceScatter(in, out, block, ncclInt32, ncclSum, t->comm, t->stream)))
    compare(t, "ncclReduceScatter", ncclInt32, out, block, wantReduced, &rs);
  bufRelease(t, in);
  bufRelease(t, out);

  const int broot = 1 % t->nranks;
  in = inputBuf(ncclFloat64, 513, t->rank);
  out = bufAlloc(513 * 8);
  Spec fromRoot = {ncclSum, ncclFloat64, t->nranks, 0, broot};
  if (EXPECT_OK(t, "ncclBroadcast",
                ncclBroadcast(in, out, 513, ncclFloat64, broot, t->comm, t->stream)))
    compare(t, "ncclBroadcast", ncclFloat64, out, 513, wantInputOf, &fromRoot);
  if (EXPECT_OK(t, "ncclBcast", ncclBcast(in, 513, ncclFloat64, broot, t->comm, t->stream)))
    compare(t, "ncclBcast", ncclFloat64, in, 513, wantInputOf, &fromRoot);
  bufRelease(t, in);
  bufRelease(t, out);

  /* Allgather of floats, and of fp8, which moves as bytes. */
  const ncclDataType_t gtypes[] = {ncclFloat32, ncclFloat8e4m3};
  for (int k = 0; k < 2; ++k) {
    const size_t each = 257;
    in = inputBuf(gtypes[k], each, t->rank);
    out = bufAlloc(each * t->nranks * typeSize(gtypes[k]));
    Spec g = {ncclSum, gtypes[k], t->nranks, each, -1};
    const char* what = k == 0 ? "ncclAllGather" : "ncclAllGather fp8";
    if (EXPECT_OK(t, what, ncclAllGather(in, out, each, gtypes[k], t->comm, t->stream)))
      compare(t, what, gtypes[k], out, each * t->nranks, wantGathered, &g);
    bufRelease(t, in);
    bufRelease(t, out);
  }

  /* All-to-all: block j of rank r's input goes to block r of rank j. */
  const size_t each = 50;
  in = inputBuf(ncclInt64, each * t->nranks, t->rank);
  out = bufAlloc(each * t->nranks * 8);
  Spec a2a = {ncclSum, ncclInt64, t->nranks, each, t->rank};
  if (EXPECT_OK(t, "ncclAlltoAll", ncclAlltoAll(in, out, each, ncclInt64, t->comm, t->stream)))
    compare(t, "ncclAlltoAll", ncclInt64, out, each * t->nranks, wantGathered, &a2a);
  bufRelease(t, in);
  bufRelease(t, out);
}

void checkRooted(TestCtx* t) {
  const size_t each = 129;
  const int root = t->nranks / 2;
  Spec g = {ncclSum, ncclFloat32, t->nranks, each, -1};
  void* in = inputBuf(ncclFloat32, each, t->rank);
  void* all = bufAlloc(each * t->nranks * 4);
  if (EXPECT_OK(t, "ncclGather",
                ncclGather(in, all, each, ncclFloat32, root, t->comm, t->stream)) &&
      t->rank == root)
    compare(t, "ncclGather", ncclFloat32, all, each * t->nranks, wantGathered, &g);
  /* Scatter back what root gathered: rank r gets rank r's input. */
  void* mine = bufAlloc(each * 4);
  Spec own = {ncclSum, ncclFloat32, t->nranks, 0, t->rank};
  if (EXPECT_OK(t, "ncclScatter",
                ncclScatter(all, mine, each, ncclFloat32, root, t->comm, t->stream)))
    compare(t, "ncclScatter", ncclFloat32, mine, each, wantInputOf, &own);
  bufRelease(t, in);
  bufRelease(t, all);
  bufRelease(t, mine);

  /* A ring of sends and receives in one group: from rank-1, to rank+1. */
  const int next = (t->rank + 1) % t->nranks, prev = (t->rank + t->nranks - 1) % t->nranks;
  in = inputBuf(ncclInt32, 1000, t->rank);
  void* got = bufAlloc(1000 * 4);
  ncclGroupStart();
  ncclResult_t s = ncclSend(in, 1000, ncclInt32, next, t->comm, t->stream);
  ncclResult_t r = ncclRecv(got, 1000, ncclInt32, prev, t->comm, t->stream);
  ncclResult_t e = ncclGroupEnd();
  Spec fromPrev = {ncclSum, ncclInt32, t->nranks, 0, prev};
  if (EXPECT_OK(t, "ncclSend", s) && EXPECT_OK(t, "ncclRecv", r) &&
      EXPECT_OK(t, "ncclGroupEnd (send/recv)", e))
    compare(t, "ncclSend/ncclRecv", ncclInt32, got, 1000, wantInputOf, &fromPrev);
  bufRelease(t, in);
  bufRelease(t, got);
}
