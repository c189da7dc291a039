// mp_device: ordering and failure cases of calls on a stream: several calls
// in flight before one synchronisation, a stalled stream (the call must not
// wait for it), host and stream calls interleaved (API order on every rank:
// the call headers would catch a reordering), a group, local refusals, and a
// peer that aborts (the stream must not hang, the async error must be set),
// and a peer that sits out a call (the timeout's error says where it waits).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mp_device.h"
#include "mp_values.h"

namespace mpdev {
namespace {

using mp::compareElems;

// An int32 sum allreduce of `count` on its own buffers, checked later.
struct Pending {
  size_t count;
  std::unique_ptr<DevBuf> send, recv;
  std::vector<unsigned char> want;
};

Pending startAllReduce(Ctx& c, size_t count, bool* ok) {
  Pending p;
  p.count = count;
  const size_t b = count * 4;
  std::vector<unsigned char> in(b);
  p.want.resize(b);
  mp::fillReduceInput(weftInt32, weftSum, c.rank, 0, count, in.data());
  mp::fillReduceExpected(weftInt32, weftSum, c.nranks, 0, count, p.want.data());
  p.send.reset(new DevBuf(b));
  p.recv.reset(new DevBuf(b));
  p.send->upload(in.data());
  *ok =
      callOk(c, "allreduce x" + std::to_string(count),
             weftAllReduce(p.send->p(), p.recv->p(), count, weftInt32, weftSum, c.comm, c.stream));
  return p;
}

void finish(Ctx& c, const std::string& what, const Pending& p) {
  expectSame(c, what + ": allreduce x" + std::to_string(p.count),
             compareElems(weftInt32, p.recv->download().data(), p.want.data(), p.count));
}

// One checked allreduce on the ring before a failure case, so that the case
// starts on a ring every rank has used.
bool warmUp(Ctx& c, const std::string& what) {
  bool ok = true;
  Pending warm = startAllReduce(c, 1000, &ok);
  if (!ok) return false;
  sync(c);
  finish(c, what, warm);
  return true;
}

}  // namespace

bool checkInFlight(Ctx& c) {
  std::vector<Pending> calls;
  bool ok = true;
  for (size_t i = 0; i < 12 && ok; ++i) calls.push_back(startAllReduce(c, 1000 + 997 * i, &ok));
  if (!ok) return false;
  sync(c);
  for (const Pending& p : calls) finish(c, "in flight", p);
  return true;
}

bool checkStalled(Ctx& c) {
  weft::fake::streamStall(c.stream);
  const uint64_t before = weft::fake::streamOpsDone(c.stream);
  auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  Pending a = startAllReduce(c, 5003, &ok);
  Pending b = ok ? startAllReduce(c, 17, &ok) : Pending();
  auto took = std::chrono::steady_clock::now() - t0;
  if (!ok) {
    weft::fake::streamResume(c.stream);
    return false;
  }
  if (took > std::chrono::seconds(2)) c.log->fail("stalled stream: the calls took over 2 s");
  usleep(100 * 1000);
  if (weft::fake::streamOpsDone(c.stream) != before)
    c.log->fail("stalled stream: it ran operations while stalled");
  else
    c.log->pass();
  weft::fake::streamResume(c.stream);
  sync(c);
  finish(c, "after a stall", a);
  finish(c, "after a stall", b);
  return true;
}

bool checkInterleaved(Ctx& c) {
  bool ok = true;
  Pending first = startAllReduce(c, 3001, &ok);
  if (!ok) return false;
  // Host, blocking: runs after `first` on the progress thread.
  const size_t hc = 3002;
  std::vector<int32_t> hin(hc), hout(hc), hwant(hc);
  mp::fillReduceInput(weftInt32, weftSum, c.rank, 0, hc, hin.data());
  mp::fillReduceExpected(weftInt32, weftSum, c.nranks, 0, hc, hwant.data());
  if (!callOk(c, "host allreduce between stream calls",
              weftAllReduce(hin.data(), hout.data(), hc, weftInt32, weftSum, c.comm, nullptr)))
    return false;
  expectSame(c, "host allreduce between stream calls",
             compareElems(weftInt32, hout.data(), hwant.data(), hc));
  Pending second = startAllReduce(c, 3003, &ok);
  if (!ok) return false;
  // Host, non-blocking, behind `second`.
  std::vector<int32_t> aout(hc);
  weftRequest_t req = nullptr;
  if (!callOk(
          c, "async allreduce between stream calls",
          weftAllReduceAsync(hin.data(), aout.data(), hc - 1, weftInt32, weftSum, c.comm, &req)))
    return false;
  Pending third = startAllReduce(c, 3004, &ok);
  if (!ok) return false;
  if (!callOk(c, "weftWait", weftWait(&req))) return false;
  expectSame(c, "async allreduce between stream calls",
             compareElems(weftInt32, aout.data(), hwant.data(), hc - 1));
  sync(c);
  finish(c, "interleaved", first);
  finish(c, "interleaved", second);
  finish(c, "interleaved", third);
  return true;
}

bool checkGroup(Ctx& c) {
  const size_t count = 2049, b = count * 4;
  const int next = (c.rank + 1) % c.nranks, prev = (c.rank + c.nranks - 1) % c.nranks;
  std::vector<unsigned char> in(b), want(b), ag(b * c.nranks), pin(b), pwant(b);
  mp::fillReduceInput(weftInt32, weftProd, c.rank, 0, count, in.data());
  mp::fillReduceExpected(weftInt32, weftProd, c.nranks, 0, count, want.data());
  for (int r = 0; r < c.nranks; ++r) mp::fillPattern(&ag[r * b], b, mp::seedOf(r, 9));
  mp::fillPattern(pin.data(), b, mp::seedOf(c.rank, next, 10));
  mp::fillPattern(pwant.data(), b, mp::seedOf(prev, c.rank, 10));
  DevBuf arBuf(b), agSend(b), agRecv(b * c.nranks), psend(b), precv(b);
  arBuf.upload(in.data());
  agSend.upload(&ag[c.rank * b]);
  psend.upload(pin.data());
  bool ok = callOk(c, "weftGroupStart", weftGroupStart());
  ok = ok &&
       callOk(c, "group allreduce",
              weftAllReduce(arBuf.p(), arBuf.p(), count, weftInt32, weftProd, c.comm, c.stream));
  ok = ok && callOk(c, "group allgather",
                    weftAllGather(agSend.p(), agRecv.p(), count, weftInt32, c.comm, c.stream));
  ok = ok && callOk(c, "group send", weftSend(psend.p(), count, weftInt32, next, c.comm, c.stream));
  ok = ok && callOk(c, "group recv", weftRecv(precv.p(), count, weftInt32, prev, c.comm, c.stream));
  ok = callOk(c, "weftGroupEnd", weftGroupEnd()) && ok;
  if (!ok) return false;
  sync(c);
  expectSame(c, "group allreduce",
             compareElems(weftInt32, arBuf.download().data(), want.data(), count));
  expectSame(c, "group allgather",
             compareElems(weftUint8, agRecv.download().data(), ag.data(), ag.size()));
  expectSame(c, "group send/recv ring",
             compareElems(weftUint8, precv.download().data(), pwant.data(), b));
  return true;
}

bool checkBadInput(Ctx& c) {
  DevBuf dev(4096), other(4096, 1);
  std::vector<char> host(4096);
  auto refused = [&](const std::string& what, weftResult_t r, const std::string& mention) {
    std::string err = weftGetLastError(nullptr);
    if (r != weftInvalidArgument || err.find(mention) == std::string::npos)
      c.log->fail(what + ": returned " + std::to_string(r) + " with '" + err +
                  "', expected weftInvalidArgument naming '" + mention + "'");
    else
      c.log->pass();
  };
  refused("NULL stream, device sendbuff",
          weftAllReduce(dev.p(), host.data(), 16, weftFloat, weftSum, c.comm, nullptr),
          "sendbuff=");
  refused("NULL stream, device recvbuff",
          weftBroadcast(host.data(), dev.p(), 16, weftFloat, 0, c.comm, nullptr), "recvbuff=");
  refused("stream, buffers on two devices",
          weftAllReduce(dev.p(), other.p(), 16, weftFloat, weftSum, c.comm, c.stream),
          "recvbuff is on device 1");
  refused("stream, pageable recvbuff",
          weftAllGather(dev.p(), host.data(), 4, weftFloat, c.comm, c.stream), "pageable");
  // Nothing reached the peers: the next call works everywhere.
  bool ok = true;
  Pending p = startAllReduce(c, 777, &ok);
  if (!ok) return false;
  sync(c);
  finish(c, "after refused calls", p);
  return true;
}

bool checkPeerAbort(Ctx& c) {
  if (!warmUp(c, "before the abort")) return false;
  if (c.rank == c.nranks - 1) {
    // The victim leaves without taking part in the next call.
    if (!callOk(c, "weftCommAbort", weftCommAbort(c.comm))) return false;
    c.comm = nullptr;
    return true;
  }
  auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  Pending p = startAllReduce(c, 100000, &ok);
  if (!ok) return true;  // refused at once is fine too
  sync(c);               // must not hang: done is raised on failure
  weftResult_t async = weftSuccess;
  if (!callOk(c, "weftCommGetAsyncError", weftCommGetAsyncError(c.comm, &async))) return false;
  const std::string text = weftGetLastError(c.comm);
  if (async == weftSuccess)
    c.log->fail("a peer aborted, yet the async error is weftSuccess");
  else
    c.log->pass();
  // Later calls on the broken communicator are refused at once.
  DevBuf b(64);
  weftResult_t r = weftAllReduce(b.p(), b.p(), 16, weftInt32, weftSum, c.comm, c.stream);
  if (r == weftSuccess)
    c.log->fail("a call on a stream of a broken communicator was accepted");
  else
    c.log->pass();
  sync(c);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("rank %d: peer abort noticed in %.1f s: %s\n", c.rank, secs, text.c_str());
  return true;
}

// The last rank sits out one ring call but stays connected (its sockets stay
// open, so nobody sees it leave). With the call headers (WEFT_CHECK_CALLS=1)
// the others' progress threads time out before their kernels start, naming
// the rank that did not arrive; without them the kernels start and wait
// until WEFT_TIMEOUT, and the error must say so, not that the stream never
// reached the kernel. The absent rank then waits past their timeout.
bool checkPeerAbsent(Ctx& c) {
  const char* check = std::getenv("WEFT_CHECK_CALLS");
  const bool checked = check == nullptr || std::atoi(check) != 0;
  const char* env = std::getenv("WEFT_TIMEOUT");
  const double timeoutSec = env != nullptr ? std::atof(env) : 0;
  if (timeoutSec <= 0 || timeoutSec > 30) {
    c.log->fail("--peer-absent needs WEFT_TIMEOUT between 0 and 30 s");
    return false;
  }
  if (!warmUp(c, "before the absence")) return false;
  if (c.rank == c.nranks - 1) {
    usleep(static_cast<useconds_t>((timeoutSec + 3) * 1e6));
    return true;
  }
  bool ok = true;
  Pending p = startAllReduce(c, 1000, &ok);
  if (!ok) return false;
  sync(c);
  weftResult_t async = weftSuccess;
  if (!callOk(c, "weftCommGetAsyncError", weftCommGetAsyncError(c.comm, &async))) return false;
  const std::string text = weftGetLastError(c.comm);
  if (async != weftTimeout)
    c.log->fail(std::string("a peer sat out the call, yet the async error is ") +
                weftGetErrorString(async) + ": " + text);
  else if (!checked && (text.find("CTAs started") == std::string::npos ||
                        text.find("still wait for a peer") == std::string::npos))
    c.log->fail("the timeout does not say that the kernel waits for a peer: " + text);
  else if (checked && text.find("ranks that have not arrived: " + std::to_string(c.nranks - 1)) ==
                          std::string::npos)
    c.log->fail("the timeout does not name the rank that sat out the call: " + text);
  else
    c.log->pass();
  return true;
}

}  // namespace mpdev
