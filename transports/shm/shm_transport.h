// Shared-memory transport between the ranks of one node (same node identity,
// see src/topo/node_id.h). Each rank owns one segment holding its doorbell, its
// board (shm_board.h; node_memory.h uses it) and one receive FIFO per local
// peer and stream; senders map it and write across.
// The TCP connection to each local peer stays open, carrying no data, so that
// a peer's death is seen at once (EOF) rather than after WEFT_TIMEOUT.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "topo/rank_place.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/shm_board.h"
#include "transports/shm/shm_channel.h"
#include "transports/shm/shm_segment.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport.h"
#include "transports/transport_setup.h"

namespace weft {

// The FIFO size per peer pair and stream for a node of `nlocal` ranks: every
// rank holds one FIFO per local peer and stream, so a node holds nlocal^2 of
// them, all mapped and prefaulted at init (2 MiB each: 2 GiB at 32 ranks,
// 32 GiB at 128). Above that budget the FIFOs shrink, by powers of two, to no
// less than 64 KiB; `wanted` (the default of WEFT_SHM_FIFO) is never exceeded.
constexpr size_t kShmNodeBudget = size_t{2} << 30;
size_t shmFifoForNode(size_t wanted, int nlocal, int nstreams);

class ShmTransport : public Transport {
 public:
  ShmTransport() = default;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;
  ~ShmTransport() override {
    if (bell_ != nullptr) bell_->closeWake();
  }
  // Collective over the bootstrap. `tcp` supplies the death-watch sockets;
  // `places` (topo/rank_place.h) says which ranks share our node. *usable is
  // false, on every rank alike, when some rank could not map a local peer's
  // segment (the WARN line says which and why): drop the transport then.
  weftResult_t setup(Bootstrap& bs, TcpTransport& tcp, const std::vector<RankPlace>& places,
                     int nstreams, size_t fifoBytes, bool* usable);
  const char* name() const override { return "shm"; }
  bool reaches(int peer) const override {
    return peer < static_cast<int>(local_.size()) && local_[peer];
  }
  Channel* sendChannel(int peer, int stream) override { return send_[peer][stream].get(); }
  Channel* recvChannel(int peer, int stream) override { return recv_[peer][stream].get(); }
  Doorbell* doorbell() { return bell_; }
  int localRanks() const { return nlocal_; }
  // Boards and doorbells of every local rank, ours included (nullptr for remote ranks).
  ShmBoard* board(int rank) const { return boards_[rank]; }
  Doorbell* bell(int rank) const { return bells_[rank]; }
  // Sockets to the local peers that become readable only when a peer dies.
  const std::vector<std::pair<int, int>>& deathFds() const { return deathFds_; }  // (rank, fd)

 private:
  // What each rank tells the others (bootstrap allgather).
  struct PeerInfo {
    uint64_t node;
    int32_t pid;
    int32_t fd;
    uint64_t bytes;
    ShmSegment::FileId file;  // what /proc/<pid>/fd/<fd> must be for a peer
  };
  // Maps every local peer's segment and makes the channels; stops at the first failure.
  weftResult_t attachPeers(TcpTransport& tcp, Bootstrap& bs, const std::vector<PeerInfo>& info,
                           const std::vector<int>& localIndex, int nstreams, size_t fifoBytes,
                           size_t footprint);

  std::vector<bool> local_;  // [rank]: same node as us
  int nlocal_ = 0;
  ShmSegment mine_;
  std::vector<std::unique_ptr<ShmSegment>> peers_;  // [rank]
  Doorbell* bell_ = nullptr;
  std::vector<ShmBoard*> boards_;
  std::vector<Doorbell*> bells_;
  std::vector<std::pair<int, int>> deathFds_;
  std::vector<std::vector<std::unique_ptr<ShmChannel>>> send_, recv_;
};

// The registry's set-up (transport_setup.h): not made with one rank, with
// WEFT_SHM_DISABLE, or where some rank cannot map a local peer's segment; the
// FIFOs fitted to the node unless WEFT_SHM_FIFO was given.
weftResult_t setUpShmTransport(TransportSetup& setup, std::unique_ptr<Transport>* made);

}  // namespace weft
