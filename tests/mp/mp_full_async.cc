// The non-blocking forms of reduce-scatter, broadcast, reduce, all-to-all,
// send/recv and barrier across processes: a batch of requests started back to
// back (large and small, in place and out of place, roots other than 0),
// completed once by weftWait in call order and once by a weftTest loop that
// polls the newest request first (requests must complete in call order);
// then a blocking call made behind a queued request and a queued group.
#include <functional>
#include <memory>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {
namespace {

struct Pending {
  std::string name;
  weftRequest_t req = nullptr;
  std::function<std::string()> check;  // "" when the result is right
};

class Batch {
 public:
  Batch(const Job& job, Log& log) : job_(job), log_(log) {}
  ~Batch() {  // completes whatever is still outstanding before buffers go away
    for (Pending& p : ops_)
      if (p.req != nullptr) weftWait(&p.req);
  }
  unsigned char* buf(size_t bytes, size_t offset) {
    bufs_.push_back(std::make_unique<Buffer>(bytes, offset));
    return bufs_.back()->data();
  }
  // Records a started request; false (logged) when starting it failed.
  // `req` is read here, after the start call (an argument next to it) set it.
  bool add(const std::string& name, weftResult_t r, weftRequest_t* req,
           std::function<std::string()> check) {
    ops_.push_back({name, *req, std::move(check)});
    *req = nullptr;
    return callOk(job_, log_, "async " + name + ": start", r);
  }
  std::vector<Pending>& ops() { return ops_; }

 private:
  const Job& job_;
  Log& log_;
  std::vector<std::unique_ptr<Buffer>> bufs_;
  std::vector<Pending> ops_;
};

std::string expectPattern(weftDataType_t dt, const void* got, size_t count, uint64_t seed) {
  return compareElems(dt, got, pattern(count * dtSize(dt), seed).data(), count);
}

// Starts the batch; `v` varies datatypes, ops and sizes between the two runs.
bool startBatch(const Job& job, Batch& b, int v) {
  const int n = job.nranks, me = job.rank, mid = n / 2, last = n - 1;
  const size_t blk = v ? 7 : largeBlock(job), big = v ? job.largeCount : 4099;
  weftRequest_t req = nullptr;
  {  // reduce-scatter, out of place
    const weftDataType_t dt = v ? weftUint64 : weftFloat;
    const weftRedOp_t op = v ? weftProd : weftSum;
    const size_t es = dtSize(dt);
    unsigned char* in = b.buf(n * blk * es, es);
    unsigned char* out = b.buf(blk * es, 3 * es);
    fillReduceInput(dt, op, me, 0, n * blk, in);
    if (!b.add("reducescatter", weftReduceScatterAsync(in, out, blk, dt, op, job.comm, &req), &req,
               [=] {
                 std::vector<unsigned char> want(blk * es);
                 fillReduceExpected(dt, op, n, me * blk, blk, want.data());
                 return compareElems(dt, out, want.data(), blk);
               }))
      return false;
  }
  {  // broadcast from the last rank, out of place
    const weftDataType_t dt = v ? weftInt8 : weftInt64;
    unsigned char* in = b.buf(big * dtSize(dt), 0);
    unsigned char* out = b.buf(big * dtSize(dt), 8);
    fillPattern(in, big * dtSize(dt), seedOf(51, v));
    if (!b.add("broadcast root=last", weftBroadcastAsync(in, out, big, dt, last, job.comm, &req),
               &req, [=] { return expectPattern(dt, out, big, seedOf(51, v)); }))
      return false;
  }
  {  // reduce to the middle rank, in place
    const weftDataType_t dt = v ? weftInt32 : weftDouble;
    const weftRedOp_t op = v ? weftMax : weftAvg;
    const size_t count = v ? 7 : job.largeCount, es = dtSize(dt);
    unsigned char* io = b.buf(count * es, 0);
    fillReduceInput(dt, op, me, 0, count, io);
    if (!b.add("reduce root=middle in-place",
               weftReduceAsync(io, io, count, dt, op, mid, job.comm, &req), &req, [=] {
                 std::vector<unsigned char> want(count * es + 1);
                 if (me == mid)
                   fillReduceExpected(dt, op, n, 0, count, want.data());
                 else
                   fillReduceInput(dt, op, me, 0, count, want.data());
                 return compareElems(dt, io, want.data(), count);
               }))
      return false;
  }
  {                                                          // all-to-all
    const weftDataType_t dt = v ? weftFloat16 : weftUint32;  // half is only copied here
    const size_t es = dtSize(dt), count = v ? blk : 333;
    unsigned char* in = b.buf(n * count * es, 0);
    unsigned char* out = b.buf(n * count * es, es);
    for (int j = 0; j < n; ++j) fillPattern(in + j * count * es, count * es, seedOf(52, me, j, v));
    if (!b.add("alltoall", weftAllToAllAsync(in, out, count, dt, job.comm, &req), &req, [=] {
          for (int j = 0; j < n; ++j) {
            std::string d = expectPattern(dt, out + j * count * es, count, seedOf(52, j, me, v));
            if (!d.empty()) return "block from rank " + std::to_string(j) + ": " + d;
          }
          return std::string();
        }))
      return false;
  }
  const int partner = me ^ 1;
  if (partner < n) {  // send/recv with the partner, the lower rank sending first
    const size_t count = v ? 1 : job.largeCount;
    unsigned char* out = b.buf(count * 2, 2);
    unsigned char* in = b.buf(count * 2, 0);
    fillPattern(out, count * 2, seedOf(53, me, v));
    auto send = [&] {
      return b.add("send to " + std::to_string(partner),
                   weftSendAsync(out, count, weftBfloat16, partner, job.comm, &req), &req,
                   [] { return std::string(); });
    };
    auto recv = [&] {
      return b.add("recv from " + std::to_string(partner),
                   weftRecvAsync(in, count, weftBfloat16, partner, job.comm, &req), &req,
                   [=] { return expectPattern(weftBfloat16, in, count, seedOf(53, partner, v)); });
    };
    if (me < partner ? !(send() && recv()) : !(recv() && send())) return false;
  }
  {  // in-place broadcast from rank 0 through the weftBroadcast form
    unsigned char* io = b.buf(7 * 8, 0);
    fillPattern(io, 7 * 8, me == 0 ? seedOf(54, v) : seedOf(55, me));
    if (!b.add("broadcast root=0 in-place",
               weftBroadcastAsync(io, io, 7, weftDouble, 0, job.comm, &req), &req,
               [=] { return expectPattern(weftDouble, io, 7, seedOf(54, v)); }))
      return false;
  }
  return b.add("barrier", weftBarrierAsync(job.comm, &req), &req, [] { return std::string(); });
}

bool waitInOrder(const Job& job, Log& log, Batch& b) {
  for (Pending& p : b.ops())
    if (!callOk(job, log, "async " + p.name + ": weftWait", weftWait(&p.req))) return false;
  return true;
}

bool testNewestFirst(const Job& job, Log& log, Batch& b) {
  std::vector<Pending>& ops = b.ops();
  const int total = static_cast<int>(ops.size());
  for (int remaining = total; remaining > 0;) {
    for (int k = total - 1; k >= 0; --k) {
      if (ops[k].req == nullptr) continue;
      int done = 0;
      if (!callOk(job, log, "async " + ops[k].name + ": weftTest", weftTest(&ops[k].req, &done)))
        return false;
      if (!done) continue;
      --remaining;
      for (int e = 0; e < k; ++e) {
        if (ops[e].req == nullptr) continue;
        int earlierDone = 0;
        if (!callOk(job, log, "async " + ops[e].name + ": weftTest",
                    weftTest(&ops[e].req, &earlierDone)))
          return false;
        if (!earlierDone) {
          log.fail("async " + ops[k].name + " completed before the earlier " + ops[e].name);
          if (!callOk(job, log, "async " + ops[e].name + ": weftWait", weftWait(&ops[e].req)))
            return false;
        }
        --remaining;
      }
    }
  }
  return true;
}

// A broadcast request and a weftGroupEndAsync ring exchange are queued, then
// a blocking reduce is called: it must run after both (call order).
bool blockingBehindQueued(const Job& job, Log& log) {
  const std::string what = "blocking reduce behind an async broadcast and an async group";
  const int n = job.nranks, next = (job.rank + 1) % n, prev = (job.rank + n - 1) % n;
  const size_t bc = job.largeCount, pc = 70001, rc = 4099;
  Buffer bcBuf(bc * 4, 0), out(pc * 8, 0), in(pc * 8, 8), red(rc * 4, 4), redOut(rc * 4, 0);
  fillPattern(bcBuf.data(), bc * 4, job.rank == n - 1 ? seedOf(56) : seedOf(57, job.rank));
  fillPattern(out.data(), pc * 8, seedOf(58, job.rank));
  fillReduceInput(weftUint32, weftSum, job.rank, 0, rc, red.data());
  weftRequest_t reqs[2] = {nullptr, nullptr};
  weftResult_t r =
      weftBroadcastAsync(bcBuf.data(), bcBuf.data(), bc, weftUint32, n - 1, job.comm, &reqs[0]);
  weftGroupStart();
  weftRecv(in.data(), pc, weftInt64, prev, job.comm, WEFT_STREAM_HOST);
  weftSend(out.data(), pc, weftInt64, next, job.comm, WEFT_STREAM_HOST);
  weftResult_t g = weftGroupEndAsync(&reqs[1]);
  weftResult_t b =
      weftReduce(red.data(), redOut.data(), rc, weftUint32, weftSum, 0, job.comm, WEFT_STREAM_HOST);
  bool alive = callOk(job, log, what + ": broadcast start", r);
  alive = callOk(job, log, what + ": weftGroupEndAsync", g) && alive;
  alive = callOk(job, log, what + ": weftReduce", b) && alive;
  for (weftRequest_t& req : reqs)
    if (req != nullptr) alive = callOk(job, log, what + ": weftWait", weftWait(&req)) && alive;
  if (!alive) return false;
  std::vector<unsigned char> want(rc * 4);
  fillReduceExpected(weftUint32, weftSum, n, 0, rc, want.data());
  const std::string diffs[] = {
      compareElems(weftUint32, bcBuf.data(), pattern(bc * 4, seedOf(56)).data(), bc),
      compareElems(weftInt64, in.data(), pattern(pc * 8, seedOf(58, prev)).data(), pc),
      job.rank == 0 ? compareElems(weftUint32, redOut.data(), want.data(), rc) : std::string()};
  const char* names[] = {"broadcast", "group recv", "reduce"};
  bool ok = true;
  for (int k = 0; k < 3; ++k) {
    if (diffs[k].empty()) continue;
    log.fail(what + ": " + names[k] + ": " + diffs[k]);
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

}  // namespace

bool checkAsyncFull(const Job& job, Log& log) {
  for (int v = 0; v < 2; ++v) {
    Batch b(job, log);
    if (!startBatch(job, b, v)) return false;
    if (!(v == 0 ? waitInOrder(job, log, b) : testNewestFirst(job, log, b))) return false;
    bool ok = true;
    for (Pending& p : b.ops()) {
      const std::string diff = p.check();
      if (diff.empty()) continue;
      log.fail(std::string("async ") + (v ? "(weftTest) " : "(weftWait) ") + p.name + ": " + diff);
      ok = false;
    }
    if (ok) log.pass();
  }
  return blockingBehindQueued(job, log);
}

}  // namespace mp
