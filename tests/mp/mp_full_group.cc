// Group calls across processes. Shuffled: every rank sends 1-3 messages to
// every rank (itself included) and receives 1-3 from each, of mixed datatypes
// and sizes (0 elements to a large odd count), posted in a rank-dependent
// random order inside one group, so messages to the same peer must keep their
// order while everything else interleaves; run with weftGroupEnd (once with a
// nested inner group), weftGroupEndAsync + weftWait and weftGroupEndAsync +
// a weftTest loop. Also: a bidirectional ring exchange, receives from self
// posted before the matching sends to self, and a group that mixes
// collectives with sends and receives.
#include <algorithm>
#include <memory>
#include <random>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {
namespace {

enum class Ending { kGroupEnd, kNested, kEndAsyncWait, kEndAsyncTest };

const char* endingName(Ending e) {
  switch (e) {
    case Ending::kGroupEnd:
      return "weftGroupEnd";
    case Ending::kNested:
      return "nested weftGroupEnd";
    case Ending::kEndAsyncWait:
      return "weftGroupEndAsync+weftWait";
    default:
      return "weftGroupEndAsync+weftTest";
  }
}

struct Msg {
  bool send;
  int peer;
  int index;  // among the messages between this rank and peer in this direction
  weftDataType_t dt;
  size_t count;
  std::unique_ptr<Buffer> buf;
};

// What the shuffled group sends from s to d: how many messages, of which type and size.
int messagesBetween(int s, int d, int salt) { return 1 + (s * 3 + d * 5 + salt) % 3; }
weftDataType_t msgType(int s, int d, int m, int salt) {
  return kAllTypes[(s * 7 + d * 3 + m + salt) % 10];
}
size_t msgCount(const Job& job, int s, int d, int m, int salt) {
  const size_t sizes[] = {0, 1, 7, 4099, 65537, std::min<size_t>(job.largeCount, 300001)};
  return sizes[(s + 2 * d + 3 * m + salt) % 6];
}
uint64_t msgSeed(int s, int d, int m, int salt) { return seedOf(41, s, d, m * 1000 + salt); }

// Ends the group the way `ending` says; false (logged) when that failed.
bool endGroup(const Job& job, Log& log, const std::string& what, Ending ending) {
  if (ending == Ending::kGroupEnd || ending == Ending::kNested)
    return callOk(job, log, what, weftGroupEnd());
  weftRequest_t req = nullptr;
  if (!callOk(job, log, what + " (weftGroupEndAsync)", weftGroupEndAsync(&req))) return false;
  if (ending == Ending::kEndAsyncWait) return callOk(job, log, what, weftWait(&req));
  for (;;) {
    int done = 0;
    if (!callOk(job, log, what + " (weftTest)", weftTest(&req, &done))) return false;
    if (done) break;
  }
  if (req != nullptr) log.fail(what + ": weftTest reported done but left the request set");
  return true;
}

bool shuffledGroup(const Job& job, Log& log, Ending ending, int salt) {
  const std::string what =
      std::string("shuffled group (") + endingName(ending) + ", salt " + std::to_string(salt) + ")";
  std::vector<Msg> msgs;
  for (int p = 0; p < job.nranks; ++p) {
    for (int m = 0; m < messagesBetween(job.rank, p, salt); ++m)
      msgs.push_back({true, p, 0, {}, 0, {}});
    for (int m = 0; m < messagesBetween(p, job.rank, salt); ++m)
      msgs.push_back({false, p, 0, {}, 0, {}});
  }
  std::mt19937 rng(static_cast<uint32_t>(seedOf(42, job.rank, salt)));
  std::shuffle(msgs.begin(), msgs.end(), rng);
  std::vector<int> sent(job.nranks, 0), received(job.nranks, 0);
  for (Msg& msg : msgs) {
    msg.index = (msg.send ? sent : received)[msg.peer]++;
    const int s = msg.send ? job.rank : msg.peer, d = msg.send ? msg.peer : job.rank;
    msg.dt = msgType(s, d, msg.index, salt);
    msg.count = msgCount(job, s, d, msg.index, salt);
    const size_t es = dtSize(msg.dt);
    msg.buf = std::make_unique<Buffer>(msg.count * es, (msg.send ? 1 : 3) * es);
    fillPattern(msg.buf->data(), msg.count * es,
                msg.send ? msgSeed(s, d, msg.index, salt) : seedOf(43, job.rank));
  }
  weftGroupStart();
  const size_t innerBegin = msgs.size() / 3, innerEnd = 2 * msgs.size() / 3;
  for (size_t k = 0; k < msgs.size(); ++k) {
    if (ending == Ending::kNested && k == innerBegin) weftGroupStart();
    Msg& msg = msgs[k];
    weftResult_t r =
        msg.send
            ? weftSend(msg.buf->data(), msg.count, msg.dt, msg.peer, job.comm, WEFT_STREAM_HOST)
            : weftRecv(msg.buf->data(), msg.count, msg.dt, msg.peer, job.comm, WEFT_STREAM_HOST);
    if (r != weftSuccess) log.fail(what + ": posting returned " + weftGetErrorString(r));
    if (ending == Ending::kNested && k + 1 == innerEnd) {
      weftResult_t inner = weftGroupEnd();
      if (inner != weftSuccess)
        log.fail(what + ": inner weftGroupEnd returned " + weftGetErrorString(inner));
    }
  }
  if (!endGroup(job, log, what, ending)) return false;

  bool ok = true;
  for (const Msg& msg : msgs) {
    const int s = msg.send ? job.rank : msg.peer, d = msg.send ? msg.peer : job.rank;
    const std::vector<unsigned char> want =
        pattern(msg.count * dtSize(msg.dt), msgSeed(s, d, msg.index, salt));
    const std::string diff = compareElems(msg.dt, msg.buf->data(), want.data(), msg.count);
    if (diff.empty() && msg.buf->guardIntact()) continue;
    log.fail(what + ": message " + std::to_string(msg.index) + " " + (msg.send ? "to" : "from") +
             " rank " + std::to_string(msg.peer) + " (" + dtName(msg.dt) + " x " +
             std::to_string(msg.count) + "): " + (msg.send ? "sendbuff modified: " : "") +
             (diff.empty() ? "wrote past the end" : diff));
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

// Three messages to self inside one group, each receive posted before its send.
bool selfGroup(const Job& job, Log& log) {
  const std::string what = "group with receives from self posted before sends to self";
  const size_t counts[] = {7, 0, 100003};
  std::vector<std::unique_ptr<Buffer>> in, out;
  weftGroupStart();
  for (int m = 0; m < 3; ++m) {
    const size_t bytes = counts[m] * sizeof(double);
    in.push_back(std::make_unique<Buffer>(bytes, 8));
    out.push_back(std::make_unique<Buffer>(bytes, 0));
    fillPattern(in.back()->data(), bytes, seedOf(44, job.rank, m));
    weftRecv(out.back()->data(), counts[m], weftDouble, job.rank, job.comm, WEFT_STREAM_HOST);
    weftSend(in.back()->data(), counts[m], weftDouble, job.rank, job.comm, WEFT_STREAM_HOST);
  }
  if (!callOk(job, log, what, weftGroupEnd())) return false;
  bool ok = true;
  for (int m = 0; m < 3; ++m) {
    const std::string diff =
        compareElems(weftDouble, out[m]->data(),
                     pattern(counts[m] * 8, seedOf(44, job.rank, m)).data(), counts[m]);
    if (diff.empty() && out[m]->guardIntact()) continue;
    log.fail(what + ": message " + std::to_string(m) + ": " + (diff.empty() ? "overrun" : diff));
    ok = false;
  }
  if (ok) log.pass();
  return true;
}

// Reduce-scatter, broadcast and a ring send/recv in one group.
bool mixedGroup(const Job& job, Log& log) {
  const std::string what = "group of reducescatter + broadcast + ring send/recv";
  const int n = job.nranks, next = (job.rank + 1) % n, prev = (job.rank + n - 1) % n;
  const size_t rc = 1001, bc = 5003, pc = 777;
  Buffer rsIn(rc * n * 4, 0), rsOut(rc * 4, 4), bc1(bc * 8, 8), toNext(pc, 0), fromPrev(pc, 1);
  fillReduceInput(weftInt32, weftSum, job.rank, 0, rc * n, rsIn.data());
  fillPattern(bc1.data(), bc * 8, job.rank == n - 1 ? seedOf(45) : seedOf(46, job.rank));
  fillPattern(toNext.data(), pc, seedOf(47, job.rank));
  weftGroupStart();
  weftReduceScatter(rsIn.data(), rsOut.data(), rc, weftInt32, weftSum, job.comm, WEFT_STREAM_HOST);
  weftRecv(fromPrev.data(), pc, weftUint8, prev, job.comm, WEFT_STREAM_HOST);
  weftBroadcast(bc1.data(), bc1.data(), bc, weftUint64, n - 1, job.comm, WEFT_STREAM_HOST);
  weftSend(toNext.data(), pc, weftUint8, next, job.comm, WEFT_STREAM_HOST);
  if (!callOk(job, log, what, weftGroupEnd())) return false;
  std::vector<unsigned char> want(rc * 4);
  fillReduceExpected(weftInt32, weftSum, n, rc * job.rank, rc, want.data());
  const std::string diffs[] = {
      compareElems(weftInt32, rsOut.data(), want.data(), rc),
      compareElems(weftUint64, bc1.data(), pattern(bc * 8, seedOf(45)).data(), bc),
      compareElems(weftUint8, fromPrev.data(), pattern(pc, seedOf(47, prev)).data(), pc)};
  const char* names[] = {"reducescatter", "broadcast", "recv"};
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

bool ringGroupCase(const Job& job, Log& log, weftDataType_t dt, size_t count) {
  const int n = job.nranks, next = (job.rank + 1) % n, prev = (job.rank + n - 1) % n;
  const size_t es = dtSize(dt), bytes = count * es;
  const std::string what =
      std::string("ring group ") + dtName(dt) + " count=" + std::to_string(count);
  Buffer toNext(bytes, es), toPrev(bytes, 0), fromPrev(bytes, 3 * es), fromNext(bytes, 2 * es);
  fillPattern(toNext.data(), bytes, seedOf(48, job.rank, next, 0));
  fillPattern(toPrev.data(), bytes, seedOf(48, job.rank, prev, 1));
  // Same posting order on every rank: with 2 ranks next == prev, and the two
  // messages each way must match in order.
  weftGroupStart();
  weftSend(toNext.data(), count, dt, next, job.comm, WEFT_STREAM_HOST);
  weftRecv(fromPrev.data(), count, dt, prev, job.comm, WEFT_STREAM_HOST);
  weftSend(toPrev.data(), count, dt, prev, job.comm, WEFT_STREAM_HOST);
  weftRecv(fromNext.data(), count, dt, next, job.comm, WEFT_STREAM_HOST);
  if (!callOk(job, log, what, weftGroupEnd())) return false;
  std::string d1 = compareElems(dt, fromPrev.data(),
                                pattern(bytes, seedOf(48, prev, job.rank, 0)).data(), count);
  std::string d2 = compareElems(dt, fromNext.data(),
                                pattern(bytes, seedOf(48, next, job.rank, 1)).data(), count);
  bool ok = d1.empty() && d2.empty() && fromPrev.guardIntact() && fromNext.guardIntact();
  if (!ok)
    log.fail(what + ": from previous: " + (d1.empty() ? "ok" : d1) +
             "; from next: " + (d2.empty() ? "ok" : d2));
  if (ok) log.pass();
  return true;
}

bool checkGroupsFull(const Job& job, Log& log) {
  if (!ringGroupCase(job, log, weftFloat, job.largeCount) ||
      !ringGroupCase(job, log, weftInt8, 7) || !selfGroup(job, log) || !mixedGroup(job, log))
    return false;
  const Ending endings[] = {Ending::kGroupEnd, Ending::kNested, Ending::kEndAsyncWait,
                            Ending::kEndAsyncTest};
  for (int salt = 0; salt < 2; ++salt)
    for (Ending ending : endings)
      if (!shuffledGroup(job, log, ending, salt * 4 + static_cast<int>(ending))) return false;
  return true;
}

}  // namespace mp
