// Single-copy collectives for communicators whose ranks all share a node:
// ranks publish their buffer addresses on the shared-memory boards and read
// each other's user buffers directly, so large data crosses between processes
// exactly once and no FIFO or staging copy is involved. A buffer from
// weftHostAlloc is mapped by the peers and read or written with plain loads
// and stores; any other buffer is read with cross-memory attach, which is
// about half as fast (both NodeMemory's: transports/shm/node_memory.h).
// Allreduce and reduce-scatter reduce each rank's block straight from every
// peer's input, in rank order (bitwise equal on all ranks); allgather,
// broadcast and all-to-all are one read per block. When every rank's output
// is mapped, allreduce and allgather push instead: each rank writes its block
// into every output while it is still in cache, with streaming stores.
//
// A private buffer (not from weftHostAlloc) of up to 1 MiB is first copied
// into the rank's outbox, a weftHostAlloc buffer the peers map once, and
// published in its place: two memcpys of cached data beat one
// cross-memory-attach read, for which the kernel pins every page per call.
// An allreduce also leaves its reduced block in the outbox, so peers
// copy results from there too. Allreduce, allgather and broadcast run calls
// over 1 MiB as a series of 1 MiB pieces (a few barriers more, each a
// cache-line hand-off), so a piece's outboxes are still cached when peers
// read them. Reduce-scatter and all-to-all take pieces too: the same element
// range of every rank's block, staged as n blocks side by side.
//
// Every collective is board barriers apart: (1) addresses published, (2)
// results ready, (3) everyone done reading, after which a rank may return and
// let its caller reuse the buffers. A push needs no (3): at (2) every rank has
// finished both reading its inputs and writing into the outputs.
#pragma once

#include <vector>

#include "base/host_memory.h"
#include "collectives/coll_context.h"
#include "collectives/local_board.h"
#include "transports/shm/node_memory.h"

namespace weft {

class LocalCopy {
 public:
  // `node` is connected (NodeMemory::connect) and readable(); `board` publishes on it.
  LocalCopy(LocalBoard* board, NodeMemory* node);
  bool sharing() const { return sharing_; }

  weftResult_t allReduce(CollContext& ctx, const CollArgs& a);
  weftResult_t reduceScatter(CollContext& ctx, const CollArgs& a);
  weftResult_t allGather(CollContext& ctx, const CollArgs& a);
  weftResult_t broadcast(CollContext& ctx, const CollArgs& a);
  weftResult_t allToAll(CollContext& ctx, const CollArgs& a);

 private:
  struct Published {
    uint64_t send;
    uint64_t sendStride;  // bytes from one block of send to the next (reduce-scatter, all-to-all)
    uint64_t recv;
    HostRegion sendRegion, recvRegion;  // inode 0: not from weftHostAlloc
    uint64_t frees;                     // hostFreeCount() of the publisher
    uint32_t recvStaged;                // recv is our outbox, not the caller's output
  };
  // What exchange() may copy into the outbox for a caller's private buffer:
  // the input except [skipFrom, skipFrom + skipBytes) (our own block, which no
  // peer reads), and whether the outbox stands for the output too (allreduce).
  // With `blocks` set, the input is that many blocks of blockBytes, inStride
  // apart (a piece of reduce-scatter or all-to-all); they are staged side by
  // side, all but block skipBlock.
  struct Stage {
    bool input = false;
    size_t skipFrom = 0, skipBytes = 0;
    bool output = false;
    int blocks = 0, skipBlock = -1;
    size_t blockBytes = 0, inStride = 0;
    // Where the input also goes, in the same pass (one block, no skip): our
    // own block of an allgather's output, written while the input is in cache.
    // Not a broadcast root's output: there the root's copy overlaps the
    // peers' reads, and moving it before barrier (1) made them wait.
    char* alsoTo = nullptr;
  };
  // One of a rank's buffers as we reach it: its address in that rank, and our
  // own address for it when we can load and store it directly (else null).
  struct PeerBuf {
    uint64_t remote = 0;
    char* local = nullptr;
    size_t stride = 0;  // between blocks (Stage::blocks); 0 for one block
  };
  struct PeerView {
    PeerBuf send, recv;
  };
  // Barrier (1): publish our buffers (sendBytes / recvBytes long, first
  // byte to last), learn everyone's, and map those that can be mapped.
  weftResult_t exchange(const CollArgs& a, size_t sendBytes, size_t recvBytes,
                        const FlowRunOptions& run, const Stage& stage);
  weftResult_t ensureOutbox() { return node_->outbox(kOutboxBytes, &outbox_, &outboxRegion_); }
  // The per-call pieces of the collectives that run larger calls piecewise:
  // allgather's piece is bytes [off, off + len) of every rank's block.
  static size_t pieceElems(weftDataType_t dt);
  weftResult_t allReducePiece(CollContext& ctx, const CollArgs& a);
  template <typename RunPiece>
  weftResult_t inPieces(const CollArgs& a, RunPiece runPiece);
  weftResult_t allGatherPiece(CollContext& ctx, const CollArgs& a, size_t off, size_t len,
                              bool stageInput);
  weftResult_t broadcastPiece(CollContext& ctx, const CollArgs& a);
  // Pieces of reduce-scatter and all-to-all: the same range of every block.
  template <typename RunPiece>
  weftResult_t inBlockPieces(const CollArgs& a, RunPiece runPiece);
  // Every rank's output is from weftHostAlloc, so every rank can write all of them.
  bool everyOutputMapped() const;
  // Copies `bytes` at `offset` in rank `peer`'s buffer `from` into `to`.
  weftResult_t readPeer(int peer, const PeerBuf& from, size_t offset, void* to, size_t bytes);
  // Copies into the caller's output: streaming stores on large calls.
  void copyOut(void* dst, const void* src, size_t bytes) const;
  // The reduction, in rank order, of every rank's input block `block` at
  // element `offset` for `count` elements: into `out`, or, when out is null,
  // into every rank's output (which everyOutputMapped() allows) at that offset.
  weftResult_t reduceBlock(CollContext& ctx, const CollArgs& a, int block, size_t offset,
                           size_t count, char* out);

  // Private buffers up to this are staged in the outbox (local_copy.cc).
  static const size_t kOutboxBytes;

  LocalBoard* board_;
  NodeMemory* node_;
  bool sharing_;            // ranks can map each other's memory (NodeMemory::sharing)
  bool streamOut_ = false;  // this call's outputs are large: write them with streaming stores
  std::vector<Published> peers_;
  std::vector<PeerView> views_;
  char* outbox_ = nullptr;  // NodeMemory's, kOutboxBytes, got at the first staging
  HostRegion outboxRegion_;
  bool stagedOut_ = false;   // this call's output is published as the outbox
  bool stagedAlso_ = false;  // exchange() also wrote the input to Stage::alsoTo
};

}  // namespace weft
