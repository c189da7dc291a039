// Single-copy collectives between the user buffers of one node's ranks (see local_copy.h).
#include "collectives/local_copy.h"

#include <cstring>

#include "base/error.h"
#include "collectives/nontemporal_copy.h"
#include "collectives/reduce.h"
#include "collectives/ring_schedule.h"

namespace weft {
namespace {

constexpr size_t kTileBytes = 256 << 10;     // per input: n tiles stay within L2
constexpr size_t kStreamMinBytes = 1 << 20;  // outputs this large skip the cache
// Every collective here runs calls larger than this as pieces of it (for
// reduce-scatter and all-to-all: over all blocks together), so that a piece's
// outboxes are still cached when peers read them. Measured, 2 and 4 ranks
// (all_reduce_perf, 4-128 MiB): 1 MiB pieces 10-45% faster than 4 MiB ones;
// 512 and 256 KiB no better than 1 MiB.
constexpr size_t kPieceBytes = 1 << 20;

// Runs run(off, len) over [0, total) in steps of `piece`; once, empty, when
// total is 0 (a count-0 call still meets its peers at the barriers).
template <typename Run>
weftResult_t forEachPiece(size_t total, size_t piece, Run run) {
  for (size_t off = 0; off < total || off == 0; off += piece)
    WEFT_CHECK(run(off, total - off < piece ? total - off : piece));
  return weftSuccess;
}

// Copies `src` to both `a` and `b`, a tile at a time, so that the second copy
// reads the tile from L1 instead of from memory. (Streaming stores for `b`,
// a cold output, were no faster: 4 ranks, 1-64 MiB allgathers.)
void copyTwice(char* a, char* b, const char* src, size_t bytes) {
  constexpr size_t kTile = 16 << 10;
  for (size_t t = 0; t < bytes; t += kTile) {
    const size_t len = bytes - t < kTile ? bytes - t : kTile;
    std::memcpy(a + t, src + t, len);
    std::memcpy(b + t, src + t, len);
  }
}

}  // namespace

const size_t LocalCopy::kOutboxBytes = kPieceBytes;

LocalCopy::LocalCopy(LocalBoard* board, NodeMemory* node)
    : board_(board),
      node_(node),
      sharing_(node->sharing()),
      peers_(node->nranks()),
      views_(node->nranks()) {}

void LocalCopy::copyOut(void* dst, const void* src, size_t bytes) const {
  if (streamOut_)
    copyStreaming(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

weftResult_t LocalCopy::readPeer(int peer, const PeerBuf& from, size_t offset, void* to,
                                 size_t bytes) {
  if (from.local == nullptr) return node_->read(peer, to, from.remote + offset, bytes);
  copyOut(to, from.local + offset, bytes);
  return weftSuccess;
}

weftResult_t LocalCopy::exchange(const CollArgs& a, size_t sendBytes, size_t recvBytes,
                                 const FlowRunOptions& run, const Stage& stage) {
  static_assert(sizeof(Published) <= LocalBoard::kMaxBytes, "Published must fit a board slot");
  const int n = board_->nranks(), me = board_->rank();
  Published mine{};
  mine.send = reinterpret_cast<uint64_t>(a.sendbuff);
  mine.recv = reinterpret_cast<uint64_t>(a.recvbuff);
  // Without sharing (share_probe.h) every buffer is published as private and
  // nothing is staged: all ranks made the same choice at init.
  if (sharing_ && a.sendbuff != nullptr) mine.sendRegion = findHostRegion(a.sendbuff, sendBytes);
  if (sharing_ && a.recvbuff != nullptr) mine.recvRegion = findHostRegion(a.recvbuff, recvBytes);
  // Private buffers that fit go through the outbox: at the same offsets as in
  // the caller's buffer, so peers address it exactly like the original, or,
  // for blocks, side by side (then the published stride says so).
  const bool strided = stage.blocks > 0;
  const size_t stagedBytes = strided ? stage.blocks * stage.blockBytes : sendBytes;
  mine.sendStride = strided ? stage.inStride : 0;
  const bool stageIn = sharing_ && stage.input && a.sendbuff != nullptr && stagedBytes > 0 &&
                       mine.sendRegion.inode == 0 && stagedBytes <= kOutboxBytes;
  stagedOut_ = sharing_ && stage.output && a.recvbuff != nullptr && recvBytes > 0 &&
               mine.recvRegion.inode == 0 && recvBytes <= kOutboxBytes;
  if (stageIn || stagedOut_) WEFT_CHECK(ensureOutbox());
  stagedAlso_ = stageIn && !strided && stage.skipBytes == 0 && stage.alsoTo != nullptr;
  if (stageIn && strided) {
    const char* in = static_cast<const char*>(a.sendbuff);
    for (int b = 0; b < stage.blocks; ++b)
      if (b != stage.skipBlock)
        std::memcpy(outbox_ + b * stage.blockBytes, in + b * stage.inStride, stage.blockBytes);
    mine.sendStride = stage.blockBytes;
  } else if (stagedAlso_) {
    copyTwice(outbox_, stage.alsoTo, static_cast<const char*>(a.sendbuff), sendBytes);
  } else if (stageIn) {
    const char* in = static_cast<const char*>(a.sendbuff);
    const size_t skipEnd = stage.skipFrom + stage.skipBytes;
    std::memcpy(outbox_, in, stage.skipFrom < sendBytes ? stage.skipFrom : sendBytes);
    if (skipEnd < sendBytes) std::memcpy(outbox_ + skipEnd, in + skipEnd, sendBytes - skipEnd);
  }
  if (stageIn) {
    mine.send = reinterpret_cast<uint64_t>(outbox_);
    mine.sendRegion = outboxRegion_;
  }
  if (stagedOut_) {
    mine.recv = reinterpret_cast<uint64_t>(outbox_);
    mine.recvRegion = outboxRegion_;
    mine.recvStaged = 1;
  }
  mine.frees = hostFreeCount();
  int slot = 0;
  WEFT_CHECK(board_->publishAndWait(&mine, sizeof(mine), run, &slot));
  streamOut_ = recvBytes >= kStreamMinBytes;
  for (int p = 0; p < n; ++p) {
    Published& theirs = peers_[p];
    std::memcpy(&theirs, board_->slotOf(p, slot), sizeof(Published));
    PeerView& v = views_[p];
    v.send.remote = theirs.send;
    v.send.stride = p == me ? stage.inStride : theirs.sendStride;  // ours: the caller's buffer
    v.recv.remote = theirs.recv;
    if (p == me) {
      v.send.local = static_cast<char*>(const_cast<void*>(a.sendbuff));
      v.recv.local = static_cast<char*>(a.recvbuff);
      continue;
    }
    node_->noteFrees(p, theirs.frees);
    WEFT_CHECK(node_->map(p, theirs.sendRegion, theirs.send, &v.send.local));
    WEFT_CHECK(node_->map(p, theirs.recvRegion, theirs.recv, &v.recv.local));
  }
  return weftSuccess;
}

bool LocalCopy::everyOutputMapped() const {
  // Decided from what every rank published, so that all ranks decide alike.
  for (const Published& p : peers_)
    if (p.recvRegion.inode == 0 || p.recvStaged != 0) return false;
  return true;
}

weftResult_t LocalCopy::reduceBlock(CollContext& ctx, const CollArgs& a, int block, size_t offset,
                                    size_t count, char* out) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t esize = datatypeSize(a.datatype);
  const size_t tileElems = kTileBytes / esize;
  // Tiles: one per peer read through cross-memory attach, one for our own
  // input (see below), and the push's result.
  char* tiles = ctx.scratch->get(static_cast<size_t>(n + 1) * kTileBytes);
  if (tiles == nullptr)
    return setError(weftSystemError, "cannot allocate %zu bytes of tiles", (n + 1) * kTileBytes);
  char* pushed = tiles + static_cast<size_t>(n) * kTileBytes;
  for (size_t t = 0; t < count; t += tileElems) {
    const size_t elems = count - t < tileElems ? count - t : tileElems;
    const size_t at = (offset + t) * esize, bytes = elems * esize;
    auto inAt = [&](int p) { return block * views_[p].send.stride + at; };
    for (int p = 0; p < n; ++p)
      if (p != me && views_[p].send.local == nullptr)
        WEFT_CHECK(node_->read(p, tiles + p * kTileBytes, views_[p].send.remote + inAt(p), bytes));
    // Our input is read in place. In place, the output overwrites it: that is
    // harmless while we are input 0 or 1 (the first combine reads each element
    // before writing it), but from rank 2 on the chain `dst = dst op in(p)` would
    // read our input after the output replaced it, so we keep a copy. A push
    // reduces into its own tile and never aliases.
    const char* mineIn = views_[me].send.local + inAt(me);
    char* dst = out != nullptr ? out + t * esize : pushed;
    if (me >= 2 && dst == mineIn) {
      std::memcpy(tiles + me * kTileBytes, mineIn, bytes);
      mineIn = tiles + me * kTileBytes;
    }
    auto input = [&](int p) -> const char* {
      if (p == me) return mineIn;
      return views_[p].send.local != nullptr ? views_[p].send.local + inAt(p)
                                             : tiles + p * kTileBytes;
    };
    reduceInRankOrder(a.datatype, a.op, dst, n, elems, input);
    if (out != nullptr) continue;
    if (a.op == weftAvg) finishAverage(a.datatype, pushed, elems, n);
    for (int p = 0; p < n; ++p) {
      // In place, the output lines were just read as input and sit in our
      // cache: a plain store hits them, a streaming one would evict them.
      char* dst = views_[p].recv.local + at;
      if (peers_[p].send == peers_[p].recv)
        std::memcpy(dst, pushed, bytes);
      else
        copyOut(dst, pushed, bytes);
    }
  }
  if (out != nullptr && a.op == weftAvg) finishAverage(a.datatype, out, count, n);
  return weftSuccess;
}

// Calls larger than a piece run as a series of piece-sized calls. The split
// depends on the size alone, so every rank runs the same series
// whichever of its buffers are shared.
size_t LocalCopy::pieceElems(weftDataType_t dt) { return kPieceBytes / datatypeSize(dt); }

// `a` as pieces at equal offsets in sendbuff and recvbuff (sendbuff may be
// NULL: a broadcast's non-root), each run by runPiece.
template <typename RunPiece>
weftResult_t LocalCopy::inPieces(const CollArgs& a, RunPiece runPiece) {
  const size_t esize = datatypeSize(a.datatype);
  return forEachPiece(a.count, pieceElems(a.datatype), [&](size_t off, size_t len) {
    CollArgs part = a;
    if (a.sendbuff != nullptr) part.sendbuff = static_cast<const char*>(a.sendbuff) + off * esize;
    part.recvbuff = static_cast<char*>(a.recvbuff) + off * esize;
    part.count = len;
    return runPiece(part);
  });
}

weftResult_t LocalCopy::allReduce(CollContext& ctx, const CollArgs& a) {
  return inPieces(a, [&](const CollArgs& part) { return allReducePiece(ctx, part); });
}

weftResult_t LocalCopy::allReducePiece(CollContext& ctx, const CollArgs& a) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t esize = datatypeSize(a.datatype);
  Span mine = segmentOf(a.count, n, me);
  Stage stage;
  stage.input = stage.output = true;
  stage.skipFrom = mine.offset * esize;
  stage.skipBytes = mine.count * esize;
  WEFT_CHECK(exchange(a, a.count * esize, a.count * esize, ctx.run, stage));
  int slot = 0;
  if (everyOutputMapped()) {
    WEFT_CHECK(reduceBlock(ctx, a, 0, mine.offset, mine.count, nullptr));
    return board_->publishAndWait(nullptr, 0, ctx.run, &slot);  // (2) all written, all read
  }
  char* block = static_cast<char*>(a.recvbuff) + mine.offset * esize;
  WEFT_CHECK(reduceBlock(ctx, a, 0, mine.offset, mine.count, block));
  // Peers copy our block from the outbox (see exchange); it is still cached.
  if (stagedOut_) std::memcpy(outbox_ + mine.offset * esize, block, mine.count * esize);
  WEFT_CHECK(board_->publishAndWait(nullptr, 0, ctx.run, &slot));  // (2) every block reduced
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    Span sp = segmentOf(a.count, n, p);
    WEFT_CHECK(readPeer(p, views_[p].recv, sp.offset * esize,
                        static_cast<char*>(a.recvbuff) + sp.offset * esize, sp.count * esize));
  }
  return board_->publishAndWait(nullptr, 0, ctx.run,
                                &slot);  // (3) nobody reads our buffers any more
}

// Reduce-scatter and all-to-all split every rank's block alike: a piece is
// elements [off, off + len) of each block, about kPieceBytes over all blocks.
// runPiece gets `a` moved to the piece (block b at sendbuff / recvbuff + b *
// the block stride), the staging of its input block by block, and len.
template <typename RunPiece>
weftResult_t LocalCopy::inBlockPieces(const CollArgs& a, RunPiece runPiece) {
  const int n = board_->nranks();
  const size_t esize = datatypeSize(a.datatype);
  size_t piece = kPieceBytes / (static_cast<size_t>(n) * esize);
  if (piece == 0) piece = 1;
  return forEachPiece(a.count, piece, [&](size_t off, size_t len) {
    CollArgs part = a;
    part.sendbuff = static_cast<const char*>(a.sendbuff) + off * esize;
    part.recvbuff = static_cast<char*>(a.recvbuff) + off * esize;
    Stage stage;
    stage.input = true;
    stage.blocks = n;
    stage.skipBlock = board_->rank();  // our own block is read by us alone, in place
    stage.blockBytes = len * esize;
    stage.inStride = a.count * esize;
    return runPiece(part, stage, len);
  });
}

weftResult_t LocalCopy::reduceScatter(CollContext& ctx, const CollArgs& a) {
  return inBlockPieces(a, [&](const CollArgs& part, const Stage& stage, size_t len) {
    const int n = board_->nranks(), me = board_->rank();
    WEFT_CHECK(exchange(part, (n - 1) * stage.inStride + stage.blockBytes, stage.blockBytes,
                        ctx.run, stage));
    WEFT_CHECK(reduceBlock(ctx, part, me, 0, len, static_cast<char*>(part.recvbuff)));
    int slot = 0;
    return board_->publishAndWait(nullptr, 0, ctx.run, &slot);  // (2) nobody reads our input
  });
}

weftResult_t LocalCopy::allGather(CollContext& ctx, const CollArgs& a) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  // Our output from weftHostAlloc: most likely every output is, and the push
  // reads our input in place, so staging it would be a wasted copy.
  const bool stageInput = findHostRegion(a.recvbuff, bytes * board_->nranks()).inode == 0;
  return forEachPiece(bytes, kPieceBytes, [&](size_t off, size_t len) {
    return allGatherPiece(ctx, a, off, len, stageInput);
  });
}

weftResult_t LocalCopy::allGatherPiece(CollContext& ctx, const CollArgs& a, size_t off, size_t len,
                                       bool stageInput) {
  const int n = board_->nranks(), me = board_->rank();
  const size_t bytes = a.count * datatypeSize(a.datatype);  // each rank's whole block
  CollArgs part = a;  // our input's piece; the output stays whole
  part.sendbuff = static_cast<const char*>(a.sendbuff) + off;
  char* out = static_cast<char*>(a.recvbuff);
  const char* in = static_cast<const char*>(part.sendbuff);
  // Out of place, a call of several pieces has its own block written by the
  // staging pass: its input comes from memory, and this reads it once, not
  // twice. A call of one piece copies its block after barrier (1): its input
  // is still cached there, where the fused pass was slower.
  Stage stage;
  stage.input = stageInput;
  if (bytes > kPieceBytes && out + me * bytes + off != in) stage.alsoTo = out + me * bytes + off;
  WEFT_CHECK(exchange(part, len, bytes * n, ctx.run, stage));
  if (everyOutputMapped()) {
    // Push our piece into every output, a tile at a time so that the tile is
    // read from memory once and from the cache for the other outputs.
    for (size_t t = 0; t < len; t += kTileBytes) {
      const size_t tile = len - t < kTileBytes ? len - t : kTileBytes;
      for (int p = 0; p < n; ++p) {
        char* dst = views_[p].recv.local + me * bytes + off + t;
        if (dst != in + t) copyOut(dst, in + t, tile);
      }
    }
  } else {
    for (int p = 0; p < n; ++p)
      if (p != me) WEFT_CHECK(readPeer(p, views_[p].send, 0, out + p * bytes + off, len));
    if (!stagedAlso_ && out + me * bytes + off != in) std::memmove(out + me * bytes + off, in, len);
  }
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

weftResult_t LocalCopy::broadcast(CollContext& ctx, const CollArgs& a) {
  return inPieces(a, [&](const CollArgs& part) { return broadcastPiece(ctx, part); });
}

weftResult_t LocalCopy::broadcastPiece(CollContext& ctx, const CollArgs& a) {
  const size_t bytes = a.count * datatypeSize(a.datatype);
  Stage stage;
  stage.input = board_->rank() == a.root;
  WEFT_CHECK(exchange(a, bytes, bytes, ctx.run, stage));
  if (board_->rank() != a.root)
    WEFT_CHECK(readPeer(a.root, views_[a.root].send, 0, a.recvbuff, bytes));
  else if (a.recvbuff != a.sendbuff)
    std::memcpy(a.recvbuff, a.sendbuff, bytes);
  int slot = 0;
  return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
}

weftResult_t LocalCopy::allToAll(CollContext& ctx, const CollArgs& a) {
  return inBlockPieces(a, [&](const CollArgs& part, const Stage& stage, size_t) {
    const int n = board_->nranks(), me = board_->rank();
    const size_t stride = stage.inStride, bytes = stage.blockBytes;
    const size_t extent = (n - 1) * stride + bytes;
    WEFT_CHECK(exchange(part, extent, extent, ctx.run, stage));
    char* out = static_cast<char*>(part.recvbuff);
    for (int p = 0; p < n; ++p)
      if (p != me)
        WEFT_CHECK(
            readPeer(p, views_[p].send, me * views_[p].send.stride, out + p * stride, bytes));
    std::memcpy(out + me * stride, static_cast<const char*>(part.sendbuff) + me * stride, bytes);
    int slot = 0;
    return board_->publishAndWait(nullptr, 0, ctx.run, &slot);
  });
}

}  // namespace weft
