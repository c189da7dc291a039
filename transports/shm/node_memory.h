// The one-sided side of shared memory: what the ranks of one node do to each
// other's memory without a channel, for communicators whose ranks all share
// the node (the one-round and single-copy collectives). Three services:
// - boards: publish up to kBoardBytes and wait until every rank published its
//   own (a barrier that carries data; shm_board.h states the ordering);
// - peers' memory: a peer's buffer, named by its address and HostRegion, is
//   mapped into this process when it came from weftHostAlloc (peer_memory.h),
//   else read with cross-memory attach (process_vm_readv);
// - an outbox: a weftHostAlloc buffer of ours that the peers map once, into
//   which a caller stages private data for them to read.
// Which bytes go where, the arithmetic and the piece splitting stay with the
// collectives (collectives/local_board.h, local_copy.h), as the verbs
// transport's RdmaMemory (transports/rdma_memory.h) leaves them to its users.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/call_header.h"
#include "base/host_memory.h"
#include "base/wait.h"
#include "transports/shm/peer_memory.h"
#include "transports/shm/shm_transport.h"

namespace weft {

class NodeMemory {
 public:
  static constexpr size_t kBoardBytes = kBoardSlotBytes;

  // `shm` reaches every rank of the communicator (rank r is local rank r's board).
  NodeMemory(ShmTransport* shm, int rank, int nranks) : shm_(shm), rank_(rank), nranks_(nranks) {}
  ~NodeMemory();
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  // Publishes `bytes` of `data` (may be 0) as our next publish and waits until
  // every rank published it too. When `check` is pending (base/call_header.h)
  // the publish carries our call header and compares the peers'. Returns the
  // slot index, valid until our next publish. Fails naming the ranks that did
  // not arrive (WEFT_TIMEOUT) or the local rank that died before it did.
  weftResult_t publishAndWait(const void* data, size_t bytes, const WaitPolicy& wait,
                              CallCheck* check, int* slot);
  const char* slotOf(int rank, int slot) const { return shm_->board(rank)->slot[slot]; }
  // Publishes `mine` and sets *all to whether every rank published true: how
  // ranks agree on a choice that each tested for itself.
  weftResult_t agree(bool mine, const WaitPolicy& wait, bool* all);

  // Collective: learns the peers' processes and checks that we may read them
  // (same user, ptrace policy: readable()), then, with `mayShare`
  // (WEFT_SHM_MAP), whether they can map each other's weftHostAlloc memory
  // (sharing()). Every rank reaches the same answers. A failed check is no
  // error: the callers fall back to the FIFOs, or to reads only.
  weftResult_t connect(const WaitPolicy& wait, bool mayShare);
  bool readable() const { return readable_; }
  bool sharing() const { return sharing_; }

  // Reads `bytes` at `remote` in rank `peer`'s memory into `to` (cross-memory attach).
  weftResult_t read(int peer, void* to, uint64_t remote, size_t bytes);
  // *local = our address for `remote` in rank `peer`'s memory, which lies in
  // `region`; nullptr when region.inode is 0 (not from weftHostAlloc: read()
  // it). Fails, naming the peer, when a published allocation cannot be mapped.
  weftResult_t map(int peer, const HostRegion& region, uint64_t remote, char** local) {
    return mapped_->resolve(peer, pids_[peer], region, remote, local);
  }
  // The peer published `frees` (its hostFreeCount()): drops the mappings of what it freed.
  void noteFrees(int peer, uint64_t frees) { mapped_->noteFrees(peer, pids_[peer], frees); }

  // Our outbox, at least `bytes` long (made at the first call; peers map it
  // through map() like any weftHostAlloc buffer). Not to be resized while a
  // peer may still read it: callers grow it only between their barriers.
  weftResult_t outbox(size_t bytes, char** at, HostRegion* region);

 private:
  // Whether every rank maps every peer's probe page (node_memory_probe.cc).
  weftResult_t probeSharing(const WaitPolicy& wait, bool* shared);
  // The publish's wait: a peer that died before publishing `seq` fails it.
  weftResult_t checkDeaths(uint64_t seq, const WaitPolicy& wait);
  uint64_t published(int rank) const {
    return shm_->board(rank)->seq.load(std::memory_order_acquire);
  }

  ShmTransport* shm_;
  int rank_, nranks_;
  uint64_t seq_ = 0;  // publishes on our board so far
  bool readable_ = false, sharing_ = false;
  std::vector<pid_t> pids_;
  std::unique_ptr<PeerMemory> mapped_;
  char* outbox_ = nullptr;
  size_t outboxBytes_ = 0;
  HostRegion outboxRegion_;
};

}  // namespace weft
