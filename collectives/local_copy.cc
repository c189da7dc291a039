// Single-copy collectives over cross-memory attach (see local_copy.h).
#include "collectives/local_copy.h"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"
#include "core/error.h"

namespace weft {
namespace {

constexpr size_t kTileBytes = 256 << 10;            // per input: n tiles stay within L2
const uint64_t kProbeWord = 0x5745465450524f42ull;  // what init() reads from every peer

}  // namespace

weftResult_t LocalCopy::init(LocalBoard* board, const FlowRunOptions& run) {
  board_ = board;
  const int n = board->nranks(), me = board->rank();
  // Under Yama's ptrace_scope=1 a peer may only read us if we allow it.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  struct Probe {
    int64_t pid;
    uint64_t addr;
  } mine{getpid(), reinterpret_cast<uint64_t>(&kProbeWord)};
  int slot = 0;
  WEFT_CHECK(board->publishAndWait(&mine, sizeof(mine), run, &slot));
  pids_.assign(n, 0);
  bool ok = true;
  for (int p = 0; p < n; ++p) {
    Probe theirs;
    std::memcpy(&theirs, board->slotOf(p, slot), sizeof(theirs));
    pids_[p] = static_cast<pid_t>(theirs.pid);
    uint64_t word = 0;
    if (p != me &&
        (readPeer(p, &word, theirs.addr, sizeof(word)) != weftSuccess || word != kProbeWord))
      ok = false;
  }
  // Everyone must agree, or the ranks would pick different algorithms.
  uint8_t verdict = ok ? 1 : 0;
  WEFT_CHECK(board->publishAndWait(&verdict, 1, run, &slot));
  usable_ = true;
  for (int p = 0; p < n; ++p) usable_ = usable_ && board->slotOf(p, slot)[0] == 1;
  peers_.assign(n, Published{0, 0});
  clearError();  // a failed probe is not an error: we fall back to the FIFOs
  return weftSuccess;
}

weftResult_t LocalCopy::readPeer(int peer, void* local, uint64_t remote, size_t bytes) {
  char* dst = static_cast<char*>(local);
  while (bytes > 0) {
    iovec l{dst, bytes};
    iovec r{reinterpret_cast<void*>(remote), bytes};
    ssize_t got = process_vm_readv(pids_[peer], &l, 1, &r, 1, 0);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return setError(weftRemoteError, "cannot read local rank %d's memory (pid %d): %s", peer,
                      pids_[peer], got < 0 ? strerror(errno) : "nothing read");
    }
    dst += got;
    remote += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return weftSuccess;
}

weftResult_t LocalCopy::exchange(const CollArgs& a, const FlowRunOptions& run) {
  Published mine{reinterpret_cast<uint64_t>(a.sendbuff), reinterpret_cast<uint64_t>(a.recvbuff)};
  int slot = 0;
  WEFT_CHECK(board_->publishAndWait(&mine, sizeof(mine), run, &slot));
  for (int p = 0; p < board_->nranks(); ++p)
    std::memcpy(&peers_[p], board_->slotOf(p, slot), sizeof(Published));
  return weftSuccess;
}

weftResult_t LocalCopy::reduceBlock(CollContext& ctx, const CollArgs& a, size_t offset,
                                    size_t count, char* out) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t esize = datatypeSize(a.datatype);
  const size_t tileElems = kTileBytes / esize;
  char* tiles = ctx.scratch->get(static_cast<size_t>(n) * kTileBytes);
  if (tiles == nullptr)
    return setError(weftSystemError, "cannot allocate %zu bytes of tiles", n * kTileBytes);
  const char* own = static_cast<const char*>(a.sendbuff);
  for (size_t t = 0; t < count; t += tileElems) {
    const size_t elems = count - t < tileElems ? count - t : tileElems;
    const size_t at = (offset + t) * esize, bytes = elems * esize;
    for (int p = 0; p < n; ++p)
      if (p != me) WEFT_CHECK(readPeer(p, tiles + p * kTileBytes, peers_[p].send + at, bytes));
    // Our input is read in place. In place, the output overwrites it: that is
    // harmless while we are input 0 or 1 (the first combine reads each element
    // before writing it), but from rank 2 on the chain `dst = dst op in(p)` would
    // read our input after the output replaced it, so we keep a copy.
    const char* mineIn = own + at;
    if (me >= 2 && out + t * esize == mineIn) {
      std::memcpy(tiles + me * kTileBytes, mineIn, bytes);
      mineIn = tiles + me * kTileBytes;
    }
    auto input = [&](int p) -> const char* { return p == me ? mineIn : tiles + p * kTileBytes; };
    char* dst = out + t * esize;
    reduceInRankOrder(a.datatype, a.op, dst, n, elems, input);
  }
  if (a.op == weftAvg) finishAverage(a.datatype, out, count, n);
  return weftSuccess;
}

weftResult_t LocalCopy::allReduce(CollContext& ctx, const CollArgs& a) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t esize = datatypeSize(a.datatype);
  WEFT_CHECK(exchange(a, ctx.run));
  Span mine = segmentOf(a.count, n, me);
  WEFT_CHECK(reduceBlock(ctx, a, mine.offset, mine.count,
                         static_cast<char*>(a.recvbuff) + mine.offset * esize));
  int slot = 0;
  WEFT_CHECK(board_->publishAndWait(nullptr, 0, ctx.run, &slot));  // (2) every block reduced
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    Span sp = segmentOf(a.count, n, p);
    WEFT_CHECK(readPeer(p, static_cast<char*>(a.recvbuff) + sp.offset * esize,
                        peers_[p].recv + sp.offset * esize, sp.count * esize));
  }
  return board_->publishAndWait(nullptr, 0, ctx.run,
                                &slot);  // (3) nobody reads our buffers any more
}

weftResult_t LocalCopy::reduceScatter(CollContext& ctx, const CollArgs& a) {
  WEFT_CHECK(exchange(a, ctx.run));
  WEFT_CHECK(reduceBlock(ctx, a, static_cast<size_t>(board_->rank()) * a.count, a.count,
                         static_cast<char*>(a.recvbuff)));
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

weftResult_t LocalCopy::allGather(CollContext& ctx, const CollArgs& a) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t bytes = a.count * datatypeSize(a.datatype);
  WEFT_CHECK(exchange(a, ctx.run));
  char* out = static_cast<char*>(a.recvbuff);
  for (int p = 0; p < n; ++p)
    if (p != me) WEFT_CHECK(readPeer(p, out + p * bytes, peers_[p].send, bytes));
  if (out + me * bytes != a.sendbuff) std::memmove(out + me * bytes, a.sendbuff, bytes);
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

weftResult_t LocalCopy::broadcast(CollContext& ctx, const CollArgs& a) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  WEFT_CHECK(exchange(a, ctx.run));
  if (board_->rank() != a.root)
    WEFT_CHECK(readPeer(a.root, a.recvbuff, peers_[a.root].send, bytes));
  else if (a.recvbuff != a.sendbuff)
    std::memcpy(a.recvbuff, a.sendbuff, bytes);
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

weftResult_t LocalCopy::allToAll(CollContext& ctx, const CollArgs& a) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t block = a.count * datatypeSize(a.datatype);
  WEFT_CHECK(exchange(a, ctx.run));
  char* out = static_cast<char*>(a.recvbuff);
  for (int p = 0; p < n; ++p)
    if (p != me) WEFT_CHECK(readPeer(p, out + p * block, peers_[p].send + me * block, block));
  std::memcpy(out + me * block, static_cast<const char*>(a.sendbuff) + me * block, block);
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

}  // namespace weft
