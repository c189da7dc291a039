// mp_device: the GPU ring (src/device/device_ring.h) under the fake CUDA,
// whose "kernel" runs the real ring schedule with one thread per CTA: calls
// (allreduce, allgather, reduce-scatter, broadcast, reduce) large enough for every CTA and many
// pieces per CTA, calls on two streams of
// one communicator with no synchronisation between them (the ring must run
// them one at a time, in API order, on every rank), pinned host buffers, a
// random mix of ring and host-staged calls on two streams; and,
// as its own run (--die sigkill, driven by kill_rank_test.sh), rank 1 killed
// while every rank's kernel is moving data: the survivors' calls must fail
// within a bounded time, their streams must move on.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mp_device.h"
#include "mp_values.h"

namespace mpdev {
namespace {

using mp::compareElems;
using mp::dtSize;

struct RingCase {
  weftDataType_t dt;
  weftRedOp_t op;
  size_t count;
  void* stream;
  std::unique_ptr<DevBuf> send, recv;
  std::vector<unsigned char> want;
};

std::unique_ptr<RingCase> start(Ctx& c, weftDataType_t dt, weftRedOp_t op, size_t count,
                                void* stream, bool inPlace, bool* ok) {
  auto rc = std::make_unique<RingCase>();
  rc->dt = dt;
  rc->op = op;
  rc->count = count;
  rc->stream = stream;
  const size_t b = count * dtSize(dt);
  std::vector<unsigned char> in(b);
  rc->want.resize(b);
  mp::fillReduceInput(dt, op, c.rank, 0, count, in.data());
  mp::fillReduceExpected(dt, op, c.nranks, 0, count, rc->want.data());
  rc->send.reset(new DevBuf(b));
  rc->send->upload(in.data());
  if (!inPlace) rc->recv.reset(new DevBuf(b));
  DevBuf& out = inPlace ? *rc->send : *rc->recv;
  *ok = callOk(c, "ring allreduce x" + std::to_string(count),
               weftAllReduce(rc->send->p(), out.p(), count, dt, op, c.comm, stream));
  return rc;
}

void check(Ctx& c, const std::string& what, const RingCase& rc) {
  const DevBuf& out = rc.recv ? *rc.recv : *rc.send;
  expectSame(
      c, what + " x" + std::to_string(rc.count) + " " + mp::dtName(rc.dt) + " " + mp::opName(rc.op),
      compareElems(rc.dt, out.download().data(), rc.want.data(), rc.count));
}

}  // namespace

bool checkRing(Ctx& c) {
  bool ok = true;
  // 3M + 5 floats (12 MB): every CTA of the default 8, shares of 375K
  // elements, the last one short, each cut in many 64 KiB pieces.
  auto big = start(c, weftFloat32, weftSum, 3 * 1024 * 1024 + 5, c.stream, true, &ok);
  if (!ok) return false;
  sync(c);
  check(c, "ring, every CTA, in place", *big);
  big.reset();

  // Allgather and reduce-scatter of 1M + 3 elements per rank: every CTA,
  // blocks placed by rank whatever order the ring visits the ranks in.
  {
    const size_t per = 1024 * 1024 + 3, b = per * 4, n = static_cast<size_t>(c.nranks);
    std::vector<unsigned char> all(b * n), in(b * n), want(b);
    for (int r = 0; r < c.nranks; ++r) mp::fillPattern(&all[r * b], b, mp::seedOf(r, per, 7));
    DevBuf gsend(b), grecv(b * n);
    gsend.upload(&all[c.rank * b]);
    ok = callOk(c, "ring allgather x" + std::to_string(per),
                weftAllGather(gsend.p(), grecv.p(), per, weftInt32, c.comm, c.stream));
    mp::fillReduceInput(weftFloat32, weftSum, c.rank, 0, per * n, in.data());
    mp::fillReduceExpected(weftFloat32, weftSum, c.nranks, per * c.rank, per, want.data());
    DevBuf rsend(b * n), rrecv(b);
    rsend.upload(in.data());
    if (ok)
      ok = callOk(
          c, "ring reduce-scatter x" + std::to_string(per),
          weftReduceScatter(rsend.p(), rrecv.p(), per, weftFloat32, weftSum, c.comm, c.stream));
    sync(c);
    if (!ok) return false;
    expectSame(c, "ring allgather, every CTA",
               compareElems(weftInt32, grecv.download().data(), all.data(), per * n));
    expectSame(c, "ring reduce-scatter, every CTA",
               compareElems(weftFloat32, rrecv.download().data(), want.data(), per));
  }

  // Broadcast and reduce of 1M + 3 elements: every CTA, the last rank as root.
  {
    const size_t count = 1024 * 1024 + 3, b = count * 4;
    const int root = c.nranks - 1;
    std::vector<unsigned char> data(b), in(b), want(b);
    mp::fillPattern(data.data(), b, mp::seedOf(root, count, 9));
    DevBuf bbuf(b);
    if (c.rank == root) bbuf.upload(data.data());
    ok = callOk(c, "ring broadcast x" + std::to_string(count),
                weftBroadcast(bbuf.p(), bbuf.p(), count, weftInt32, root, c.comm, c.stream));
    mp::fillReduceInput(weftFloat32, weftMax, c.rank, 0, count, in.data());
    mp::fillReduceExpected(weftFloat32, weftMax, c.nranks, 0, count, want.data());
    DevBuf rsend(b), rrecv(b);
    rsend.upload(in.data());
    if (ok)
      ok = callOk(
          c, "ring reduce x" + std::to_string(count),
          weftReduce(rsend.p(), rrecv.p(), count, weftFloat32, weftMax, root, c.comm, c.stream));
    sync(c);
    if (!ok) return false;
    expectSame(c, "ring broadcast, every CTA, in place",
               compareElems(weftInt32, bbuf.download().data(), data.data(), count));
    if (c.rank == root)
      expectSame(c, "ring reduce, every CTA",
                 compareElems(weftFloat32, rrecv.download().data(), want.data(), count));
  }

  // Two streams, no synchronisation in between: the kernels of one
  // communicator run in API order whatever stream they are on.
  void* other = weft::fake::streamCreate();
  std::vector<std::unique_ptr<RingCase>> calls;
  const size_t counts[] = {300001, 200003, 100, 500000, 7, 65536};
  for (size_t i = 0; i < 6 && ok; ++i)
    calls.push_back(start(c, i % 3 == 0 ? weftInt64 : weftInt32, i % 2 ? weftMax : weftSum,
                          counts[i], i % 2 ? other : c.stream, false, &ok));
  sync(c);
  weft::fake::streamSync(other);
  weft::fake::streamDestroy(other);
  if (!ok) return false;
  for (const auto& rc : calls) check(c, "ring, two streams", *rc);

  // Pinned host memory: the kernel reaches it at its device address.
  const size_t n = 123457, b = n * 4;
  auto* pin = static_cast<unsigned char*>(weft::fake::pinnedAlloc(b));
  std::vector<unsigned char> want(b);
  mp::fillReduceInput(weftInt32, weftMin, c.rank, 0, n, pin);
  mp::fillReduceExpected(weftInt32, weftMin, c.nranks, 0, n, want.data());
  ok = callOk(c, "ring allreduce on pinned memory",
              weftAllReduce(pin, pin, n, weftInt32, weftMin, c.comm, c.stream));
  sync(c);
  if (ok) expectSame(c, "ring, pinned, in place", compareElems(weftInt32, pin, want.data(), n));
  weft::fake::memFree(pin);
  return ok;
}

// A seeded sequence (the same on every rank) of 40 calls with no
// synchronisation until the end, over two streams: ring allreduces and
// allgathers of random sizes, types and ops, and host-staged calls between
// them (weftAvg allreduces): the ring's kernels and the staged calls must
// keep API order on the progress thread and never step on each other.
bool checkRingMixed(Ctx& c) {
  std::mt19937 rng(20261201);
  void* streams[2] = {c.stream, weft::fake::streamCreate()};
  const weftDataType_t types[] = {weftInt32,   weftFloat32, weftInt64,   weftUint8,
                                  weftFloat16, weftFloat64, weftBfloat16};
  const weftRedOp_t ops[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
  struct Gather {
    size_t bytes;
    std::unique_ptr<DevBuf> send, recv;
    std::vector<unsigned char> want;
  };
  std::vector<std::unique_ptr<RingCase>> reduces;
  std::vector<Gather> gathers;
  bool ok = true;
  for (int i = 0; i < 40 && ok; ++i) {
    void* stream = streams[rng() % 2];
    const size_t count = 1 + rng() % 200000;
    if (rng() % 4 == 0) {
      Gather g;
      g.bytes = count;
      g.send.reset(new DevBuf(g.bytes));
      g.recv.reset(new DevBuf(g.bytes * c.nranks));
      g.want.resize(g.bytes * c.nranks);
      for (int r = 0; r < c.nranks; ++r)
        mp::fillPattern(&g.want[r * g.bytes], g.bytes, mp::seedOf(r, count, i));
      g.send->upload(&g.want[c.rank * g.bytes]);
      ok = callOk(c, "allgather between ring calls",
                  weftAllGather(g.send->p(), g.recv->p(), g.bytes, weftUint8, c.comm, stream));
      gathers.push_back(std::move(g));
      continue;
    }
    const weftDataType_t dt = types[rng() % 7];
    weftRedOp_t op = ops[rng() % 5];
    if (dt != weftInt32 && dt != weftFloat32 && op != weftSum) op = weftMax;  // exact references
    reduces.push_back(start(c, dt, op, count, stream, rng() % 2 == 0, &ok));
  }
  sync(c);
  weft::fake::streamSync(streams[1]);
  weft::fake::streamDestroy(streams[1]);
  if (!ok) return false;
  for (const auto& rc : reduces) check(c, "mixed sequence", *rc);
  for (const Gather& g : gathers)
    expectSame(c, "mixed sequence: allgather x" + std::to_string(g.bytes),
               compareElems(weftUint8, g.recv->download().data(), g.want.data(), g.want.size()));
  return true;
}

void ringKill(Ctx& c) {
  bool ok = true;
  auto warm = start(c, weftInt32, weftSum, 1000, c.stream, false, &ok);
  sync(c);
  if (!ok) return;
  if (c.rank == 1) {
    // A 4M-element call on 3 ranks moves 44 messages per channel: die at 10.
    std::printf("DYING rank 1: sigkill in its ring kernel, after 10 messages\n");
    std::fflush(stdout);
    weft::fake::killDuringRingKernel(10);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 400; ++i) {
    auto rc = start(c, weftInt32, weftSum, 4 << 20, c.stream, true, &ok);
    sync(c);  // must not hang: the watch raises the abort word
    weftResult_t async = weftSuccess;
    weftCommGetAsyncError(c.comm, &async);
    if (!ok || async != weftSuccess) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const bool inTime = secs < 8;  // WEFT_TIMEOUT is 10: the departure is seen, not waited out
      std::printf("%s rank %d: call %d failed after %.2f s: %s\n",
                  inTime ? "SURVIVOR-OK" : "UNEXPECTED", c.rank, i + 1, secs,
                  weftGetLastError(c.comm));
      return;
    }
  }
  std::printf("UNEXPECTED rank %d: 400 calls passed although rank 1 died\n", c.rank);
}

}  // namespace mpdev
