// One test that feeds the C ABI every kind of bad input we know of (null
// buffers, overflowing sizes, unknown datatypes and ops, ranks out of range,
// overlapping buffers, dead or foreign communicators, broken unique ids,
// misuse of groups and requests...) and counts them. Each kind must return
// weftInvalidArgument or weftInvalidUsage with a weftGetLastError sentence
// that names the argument; a crash or hang fails the whole test. Prints
// "bad input kinds: N tried, N rejected".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Kind {
  const char* name;
  weftResult_t want;
  const char* mention;  // what the sentence must contain (nullptr: checked in a child)
  std::function<weftResult_t()> call;
};

// A fresh 1-rank communicator (the rendezvous is served in this process).
weftComm_t newComm() {
  weftUniqueId id;
  weftComm_t comm = nullptr;
  if (weftGetUniqueId(&id) != weftSuccess || weftCommInitRank(&comm, 1, id, 0) != weftSuccess)
    return nullptr;
  return comm;
}

// Runs `use` in a forked child on `comm`; the child exits with the result code.
weftResult_t inForkedChild(weftComm_t comm, char* buf) {
  pid_t pid = fork();
  if (pid == 0) {
    weftResult_t r = weftAllReduce(buf, buf, 4, weftFloat32, weftSum, comm, nullptr);
    bool named = std::strstr(weftGetLastError(nullptr), "forked child") != nullptr;
    _exit(named ? static_cast<int>(r) : 100);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 100) return weftInternalError;
  // The parent's last error is what the check reads: give it the child's verdict.
  return static_cast<weftResult_t>(WEXITSTATUS(status));
}

}  // namespace

TEST(BadInput, EveryKindIsRejectedWithASentence) {
  weftComm_t comm = newComm();
  ASSERT_NE(comm, nullptr) << weftGetLastError(nullptr);
  weftComm_t dead = newComm();
  ASSERT_NE(dead, nullptr);
  ASSERT_EQ(weftCommDestroy(dead), weftSuccess);
  weftComm_t aborted = newComm();
  ASSERT_NE(aborted, nullptr);
  ASSERT_EQ(weftCommAbort(aborted), weftSuccess);
  weftComm_t twice = newComm();
  ASSERT_NE(twice, nullptr);
  ASSERT_EQ(weftCommDestroy(twice), weftSuccess);

  std::vector<char> mem(1 << 12);
  char* b = mem.data();
  char* c = b + 2048;
  const size_t huge = SIZE_MAX / 2;
  // Out-of-range enums as a C caller would pass them: made at each call from an
  // int, never stored as the enum type (reading one back is undefined in C++).
  volatile int rawBadType = 42, rawNegType = -1, rawBadOp = 9, rawNegOp = -3;
#define badType static_cast<weftDataType_t>(rawBadType)
#define negType static_cast<weftDataType_t>(rawNegType)
#define badOp static_cast<weftRedOp_t>(rawBadOp)
#define negOp static_cast<weftRedOp_t>(rawNegOp)
  weftStream_t stream = reinterpret_cast<weftStream_t>(0x1);
  weftRequest_t req = nullptr;
  weftRequest_t* nullReq = nullptr;
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftUniqueId flipped = id;
  flipped.internal[3] = static_cast<char>(flipped.internal[3] ^ 0x40);
  weftUniqueId zeros;
  std::memset(&zeros, 0, sizeof(zeros));
  char text[WEFT_UNIQUE_ID_STRLEN];
  ASSERT_EQ(weftUniqueIdToString(&id, text, sizeof(text)), weftSuccess);
  std::string truncated(text, 100);
  std::string nonHex = text;
  nonHex[10] = 'z';
  std::string tooLong = std::string(text) + "00";
  weftComm_t out = nullptr;
  int ival = 0;
  weftResult_t rval = weftSuccess;
  std::string saved;  // a kind that must call something after the bad call keeps its sentence here
  const weftResult_t IA = weftInvalidArgument, IU = weftInvalidUsage;
  auto ar = [&](const void* s, void* r, size_t n, weftDataType_t t, weftRedOp_t o, weftComm_t cm,
                weftStream_t st) { return weftAllReduce(s, r, n, t, o, cm, st); };

  std::vector<Kind> kinds = {
      {"allreduce null sendbuff", IA, "sendbuff",
       [&] { return ar(nullptr, c, 4, weftFloat32, weftSum, comm, nullptr); }},
      {"allreduce null recvbuff", IA, "recvbuff",
       [&] { return ar(b, nullptr, 4, weftFloat32, weftSum, comm, nullptr); }},
      {"allreduce byte-size overflow", IA, "overflows",
       [&] { return ar(b, c, huge, weftFloat64, weftSum, comm, nullptr); }},
      {"allreduce count SIZE_MAX", IA, "overflows",
       [&] { return ar(b, c, SIZE_MAX, weftInt8, weftSum, comm, nullptr); }},
      {"allreduce unknown datatype", IA, "datatype",
       [&] { return ar(b, c, 4, badType, weftSum, comm, nullptr); }},
      {"allreduce negative datatype", IA, "datatype",
       [&] { return ar(b, c, 4, negType, weftSum, comm, nullptr); }},
      {"allreduce unknown op", IA,
       "op=", [&] { return ar(b, c, 4, weftFloat32, badOp, comm, nullptr); }},
      {"allreduce negative op", IA,
       "op=", [&] { return ar(b, c, 4, weftFloat32, negOp, comm, nullptr); }},
      {"allreduce partial overlap", IA, "overlap",
       [&] { return ar(b, b + 4, 16, weftFloat32, weftSum, comm, nullptr); }},
      {"allreduce NULL comm", IA, "comm is NULL",
       [&] { return ar(b, c, 4, weftFloat32, weftSum, nullptr, nullptr); }},
      {"allreduce CUDA stream without CUDA", IA, "stream",
       [&] { return ar(b, c, 4, weftFloat32, weftSum, comm, stream); }},
      {"allreduce bogus comm pointer", IA, "not a live communicator",
       [&] { return ar(b, c, 4, weftFloat32, weftSum, reinterpret_cast<weftComm_t>(b), nullptr); }},
      {"allgather null sendbuff", IA, "sendbuff",
       [&] { return weftAllGather(nullptr, c, 4, weftFloat32, comm, nullptr); }},
      {"allgather null recvbuff", IA, "recvbuff",
       [&] { return weftAllGather(b, nullptr, 4, weftFloat32, comm, nullptr); }},
      {"allgather overflow", IA, "overflows",
       [&] { return weftAllGather(b, c, huge, weftInt32, comm, nullptr); }},
      {"allgather misplaced overlap", IA, "overlap",
       [&] { return weftAllGather(b + 1, b, 4, weftFloat32, comm, nullptr); }},
      {"allgather unknown datatype", IA, "datatype",
       [&] { return weftAllGather(b, c, 4, badType, comm, nullptr); }},
      {"reducescatter null recvbuff", IA, "recvbuff",
       [&] { return weftReduceScatter(b, nullptr, 4, weftFloat32, weftSum, comm, nullptr); }},
      {"reducescatter unknown op", IA,
       "op=", [&] { return weftReduceScatter(b, c, 4, weftFloat32, badOp, comm, nullptr); }},
      {"reducescatter misplaced overlap", IA, "overlap",
       [&] { return weftReduceScatter(b, b + 2, 4, weftFloat32, weftSum, comm, nullptr); }},
      {"broadcast negative root", IA, "root=-1",
       [&] { return weftBroadcast(b, c, 4, weftFloat32, -1, comm, nullptr); }},
      {"broadcast root = nranks", IA, "root=1",
       [&] { return weftBroadcast(b, c, 4, weftFloat32, 1, comm, nullptr); }},
      {"broadcast null sendbuff on root", IA, "sendbuff",
       [&] { return weftBroadcast(nullptr, c, 4, weftFloat32, 0, comm, nullptr); }},
      {"bcast null buffer", IA, "buff",
       [&] { return weftBcast(nullptr, 4, weftFloat32, 0, comm, nullptr); }},
      {"reduce root out of range", IA, "root=7",
       [&] { return weftReduce(b, c, 4, weftFloat32, weftSum, 7, comm, nullptr); }},
      {"reduce unknown op", IA,
       "op=", [&] { return weftReduce(b, c, 4, weftFloat32, badOp, 0, comm, nullptr); }},
      {"reduce null sendbuff", IA, "sendbuff",
       [&] { return weftReduce(nullptr, c, 4, weftFloat32, weftSum, 0, comm, nullptr); }},
      {"alltoall in place", IA, "overlap",
       [&] { return weftAllToAll(b, b, 4, weftFloat32, comm, nullptr); }},
      {"alltoall null recvbuff", IA, "recvbuff",
       [&] { return weftAllToAll(b, nullptr, 4, weftFloat32, comm, nullptr); }},
      {"send negative peer", IA, "peer=-1",
       [&] { return weftSend(b, 4, weftFloat32, -1, comm, nullptr); }},
      {"send peer = nranks", IA, "peer=1",
       [&] { return weftSend(b, 4, weftFloat32, 1, comm, nullptr); }},
      {"send null buffer", IA, "sendbuff",
       [&] { return weftSend(nullptr, 4, weftFloat32, 0, comm, nullptr); }},
      {"send unknown datatype", IA, "datatype",
       [&] { return weftSend(b, 4, badType, 0, comm, nullptr); }},
      {"recv peer out of range", IA, "peer=5",
       [&] { return weftRecv(c, 4, weftFloat32, 5, comm, nullptr); }},
      {"recv null buffer", IA, "recvbuff",
       [&] { return weftRecv(nullptr, 4, weftFloat32, 0, comm, nullptr); }},
      {"async with null request", IA, "request",
       [&] { return weftAllReduceAsync(b, c, 4, weftFloat32, weftSum, comm, nullptr); }},
      {"wait on null request", IA, "request", [&] { return weftWait(nullReq); }},
      {"wait on completed request", IA, "request", [&] { return weftWait(&req); }},
      {"test with null done", IA, "done",
       [&] {
         weftRequest_t r2 = reinterpret_cast<weftRequest_t>(b);
         return weftTest(&r2, nullptr);
       }},
      {"use of destroyed comm", IA, "not a live communicator",
       [&] { return ar(b, c, 4, weftFloat32, weftSum, dead, nullptr); }},
      {"use of aborted comm", IA, "not a live communicator",
       [&] { return weftBarrier(aborted, nullptr); }},
      {"double destroy", IA, "not a live communicator", [&] { return weftCommDestroy(twice); }},
      {"abort of destroyed comm", IA, "not a live communicator",
       [&] { return weftCommAbort(dead); }},
      {"use from forked child", IU, nullptr, [&] { return inForkedChild(comm, b); }},
      {"init nranks 0", IA, "nranks=0", [&] { return weftCommInitRank(&out, 0, id, 0); }},
      {"init rank out of range", IA, "rank=3", [&] { return weftCommInitRank(&out, 2, id, 3); }},
      {"init null comm", IA, "comm is NULL", [&] { return weftCommInitRank(nullptr, 1, id, 0); }},
      {"init altered unique id", IA, "commId",
       [&] { return weftCommInitRank(&out, 1, flipped, 0); }},
      {"init all-zero unique id", IA, "commId",
       [&] { return weftCommInitRank(&out, 1, zeros, 0); }},
      {"unique id text truncated", IA, "str",
       [&] { return weftUniqueIdFromString(truncated.c_str(), &zeros); }},
      {"unique id text not hex", IA, "str",
       [&] { return weftUniqueIdFromString(nonHex.c_str(), &zeros); }},
      {"unique id text too long", IA, "str",
       [&] { return weftUniqueIdFromString(tooLong.c_str(), &zeros); }},
      {"unique id text NULL", IA, "NULL", [&] { return weftUniqueIdFromString(nullptr, &zeros); }},
      {"unique id to short buffer", IA, "str", [&] { return weftUniqueIdToString(&id, text, 10); }},
      {"get unique id NULL", IA, "uniqueId", [&] { return weftGetUniqueId(nullptr); }},
      {"init all ndev 0", IA, "ndev", [&] { return weftCommInitAll(&out, 0, nullptr); }},
      {"count NULL", IA, "count", [&] { return weftCommCount(comm, nullptr); }},
      {"user rank NULL", IA, "rank", [&] { return weftCommUserRank(comm, nullptr); }},
      {"async error NULL", IA, "asyncError", [&] { return weftCommGetAsyncError(comm, nullptr); }},
      {"async error of destroyed comm", IA, "not a live",
       [&] { return weftCommGetAsyncError(dead, &rval); }},
      {"count of destroyed comm", IA, "not a live", [&] { return weftCommCount(dead, &ival); }},
      {"gpu ctas NULL", IA, "ctas is NULL",
       [&] { return weftCommGpuCtas(comm, 4, weftFloat32, nullptr); }},
      {"gpu ctas datatype", IA, "datatype=99",
       [&] { return weftCommGpuCtas(comm, 4, static_cast<weftDataType_t>(99), &ival); }},
      {"gpu ctas of destroyed comm", IA, "not a live",
       [&] { return weftCommGpuCtas(dead, 4, weftFloat32, &ival); }},
      {"split negative color", IA, "color",
       [&] { return weftCommSplit(comm, -5, 0, &out, nullptr); }},
      {"split null newcomm", IA, "newcomm",
       [&] { return weftCommSplit(comm, 0, 0, nullptr, nullptr); }},
      {"split with config", IA, "config", [&] { return weftCommSplit(comm, 0, 0, &out, b); }},
      {"group end without start", IU, "weftGroupStart", [&] { return weftGroupEnd(); }},
      {"async call inside a group", IU, "group",
       [&] {
         weftGroupStart();
         weftResult_t r = weftAllReduceAsync(b, c, 4, weftFloat32, weftSum, comm, &req);
         saved = weftGetLastError(nullptr);  // weftGroupEnd clears it
         weftGroupEnd();
         return r;
       }},
      {"group end async null request", IA, "group stays open",
       [&] {
         weftGroupStart();
         weftResult_t r = weftGroupEndAsync(nullptr);
         saved = weftGetLastError(nullptr);
         // The refused call left the group open; a group left open would
         // record (not run) the final check's allreduce below.
         EXPECT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
         return r;
       }},
      {"shrink excluding everyone", IA, "exclude",
       [&] {
         int all[] = {0};
         return weftCommShrink(comm, all, 1, &out);
       }},
      {"shrink rank out of range", IA, "excludeRanks",
       [&] {
         int bad[] = {4};
         return weftCommShrink(comm, bad, 1, &out);
       }},
      {"shrink null list", IA, "excludeRanks",
       [&] { return weftCommShrink(comm, nullptr, 2, &out); }},
      {"shrink null newcomm", IA, "newcomm",
       [&] { return weftCommShrink(comm, nullptr, 0, nullptr); }},
      {"shrink negative count", IA, "nExclude",
       [&] { return weftCommShrink(comm, nullptr, -1, &out); }},
  };

#undef badType
#undef negType
#undef badOp
#undef negOp
  int rejected = 0;
  for (const Kind& k : kinds) {
    weftResult_t got = k.call();
    std::string why = saved.empty() ? weftGetLastError(nullptr) : saved;
    saved.clear();
    const bool ok = got == k.want && (k.mention == nullptr ||
                                      (!why.empty() && why.find(k.mention) != std::string::npos));
    EXPECT_TRUE(ok) << k.name << ": returned " << weftGetErrorString(got) << ", wanted "
                    << weftGetErrorString(k.want) << "; sentence '" << why << "' should mention '"
                    << (k.mention ? k.mention : "(checked in the child)") << "'";
    rejected += ok ? 1 : 0;
  }
  // The communicator still works after all that.
  EXPECT_EQ(ar(b, c, 4, weftFloat32, weftSum, comm, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  std::printf("bad input kinds: %zu tried, %d rejected with the right code and sentence\n",
              kinds.size(), rejected);
  EXPECT_GE(kinds.size(), 40u);
}
