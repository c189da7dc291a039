// weftCommSplit across processes: by rank parity (keys in rank order, then
// keys that reverse it), and with WEFT_SPLIT_NOCOLOR for every third rank;
// each rank checks whether it got a communicator and its rank and size there.
// Then the split communicators and the parent are used CONCURRENTLY, one
// thread per communicator in each process, each thread running the same
// suite of collectives, a ring group and barriers against references for its
// own communicator's ranks. Last, one group spans the parent and a split
// communicator.
#include <algorithm>
#include <string>
#include <thread>

#include "mp_full.h"
#include "mp_values.h"

namespace mp {
namespace {

struct Split {
  const char* name;
  int (*color)(int rank, int nranks);
  int (*key)(int rank, int nranks);
};

const Split kSplits[] = {
    {"parity", [](int r, int) { return r % 2; }, [](int r, int) { return r; }},
    {"parity, reversed keys", [](int r, int) { return r % 2; }, [](int r, int n) { return n - r; }},
    {"nocolor for rank%3==1", [](int r, int) { return r % 3 == 1 ? WEFT_SPLIT_NOCOLOR : 7; },
     [](int, int) { return 0; }},
};

// The members of rank `me`'s color, in their new rank order (empty for no color).
std::vector<int> membersOf(const Split& s, int me, int n) {
  std::vector<int> members;
  const int color = s.color(me, n);
  if (color == WEFT_SPLIT_NOCOLOR) return members;
  for (int r = 0; r < n; ++r)
    if (s.color(r, n) == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return s.key(a, n) < s.key(b, n); });
  return members;
}

// Splits and checks membership; false when the call failed.
bool split(const Job& job, Log& log, const Split& s, Job* out) {
  const std::string what = std::string("weftCommSplit (") + s.name + ")";
  weftComm_t comm = nullptr;
  if (!callOk(job, log, what,
              weftCommSplit(job.comm, s.color(job.rank, job.nranks), s.key(job.rank, job.nranks),
                            &comm, nullptr)))
    return false;
  *out = job;
  out->comm = comm;
  const std::vector<int> members = membersOf(s, job.rank, job.nranks);
  if (members.empty()) {
    if (comm != nullptr) log.fail(what + ": a rank without a color got a communicator");
    return true;
  }
  if (comm == nullptr) {
    log.fail(what + ": no communicator returned");
    return true;
  }
  const int want =
      static_cast<int>(std::find(members.begin(), members.end(), job.rank) - members.begin());
  weftCommUserRank(comm, &out->rank);
  weftCommCount(comm, &out->nranks);
  if (out->rank != want || out->nranks != static_cast<int>(members.size())) {
    log.fail(what + ": rank " + std::to_string(out->rank) + " of " + std::to_string(out->nranks) +
             ", want " + std::to_string(want) + " of " + std::to_string(members.size()));
    out->rank = want;  // keep the references consistent with what peers expect
  } else {
    log.pass();
  }
  return true;
}

// What each thread runs on its communicator.
void suite(const Job& job, Log& log) {
  const std::vector<int> roots = testRoots(job.nranks);
  const size_t big = job.largeCount / 4 | 1;
  for (int round = 0; round < 2; ++round) {
    bool ok =
        reduceScatterCase(job, log, weftInt32, weftSum, big / job.nranks | 1, round == 1, true) &&
        broadcastCase(job, log, weftFloat, big, roots.back(), BcastForm::kBcast) &&
        reduceCase(job, log, weftDouble, weftMin, big, roots[roots.size() / 2], round == 0,
                   nullptr) &&
        allToAllCase(job, log, weftUint64, 4099, 1, 0) && ringGroupCase(job, log, weftInt64, big) &&
        barrierCase(job, log, 2, 2);
    if (!ok) return;
  }
}

// One group over two communicators: a reduce-scatter on the parent and a
// broadcast plus a ring send/recv on the split one, run concurrently by weftGroupEnd.
bool crossGroup(const Job& world, const Job& sub, Log& log) {
  const std::string what = "one group over the parent and a split communicator";
  const size_t rc = 1001, bc = 5003, pc = 333;
  const int n = sub.nranks, next = (sub.rank + 1) % n, prev = (sub.rank + n - 1) % n;
  Buffer rsIn(rc * world.nranks * 8, 8), rsOut(rc * 8, 0), bcBuf(bc * 4, 4), out(pc, 1), in(pc, 0);
  fillReduceInput(weftInt64, weftSum, world.rank, 0, rc * world.nranks, rsIn.data());
  fillPattern(bcBuf.data(), bc * 4, sub.rank == 0 ? seedOf(61, n) : seedOf(62, sub.rank));
  fillPattern(out.data(), pc, seedOf(63, sub.rank, n));
  weftGroupStart();
  weftBroadcast(bcBuf.data(), bcBuf.data(), bc, weftFloat, 0, sub.comm, WEFT_STREAM_HOST);
  weftReduceScatter(rsIn.data(), rsOut.data(), rc, weftInt64, weftSum, world.comm,
                    WEFT_STREAM_HOST);
  weftSend(out.data(), pc, weftInt8, next, sub.comm, WEFT_STREAM_HOST);
  weftRecv(in.data(), pc, weftInt8, prev, sub.comm, WEFT_STREAM_HOST);
  if (!callOk(world, log, what, weftGroupEnd())) return false;
  std::vector<unsigned char> want(rc * 8);
  fillReduceExpected(weftInt64, weftSum, world.nranks, rc * world.rank, rc, want.data());
  const std::string diffs[] = {
      compareElems(weftInt64, rsOut.data(), want.data(), rc),
      compareElems(weftFloat, bcBuf.data(), pattern(bc * 4, seedOf(61, n)).data(), bc),
      compareElems(weftInt8, in.data(), pattern(pc, seedOf(63, prev, n)).data(), pc)};
  const char* names[] = {"reducescatter on the parent", "broadcast on the split",
                         "recv on the split"};
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

bool checkSplitFull(const Job& job, Log& log) {
  Job subs[3];
  for (int k = 0; k < 3; ++k)
    if (!split(job, log, kSplits[k], &subs[k])) return false;

  // Parent, reversed-parity and nocolor communicators, one thread each.
  const Job* jobs[3] = {&job, &subs[1], &subs[2]};
  Log logs[3] = {Log(job.rank), Log(job.rank), Log(job.rank)};
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    if (jobs[k]->comm != nullptr) threads.emplace_back([&, k] { suite(*jobs[k], logs[k]); });
  for (std::thread& t : threads) t.join();
  for (const Log& l : logs) log.absorb(l);
  if (!crossGroup(job, subs[0], log)) return false;

  for (Job& s : subs)
    if (s.comm != nullptr && weftCommDestroy(s.comm) != weftSuccess)
      log.fail(std::string("weftCommDestroy of a split communicator: ") +
               weftGetLastError(nullptr));
  return true;
}

}  // namespace mp
