// Shared-memory transport setup (see shm_transport.h).
#include "transports/shm/shm_transport.h"

#include <unistd.h>

#include <cstdio>
#include <new>

#include "base/error.h"
#include "base/log.h"
#include "topo/rank_place.h"

namespace weft {
namespace {

// Segment layout: [doorbell page][publication board][FIFOs, one per local sender and stream].
constexpr size_t kBellBytes = 4096;
constexpr size_t kBoardBytes = (sizeof(ShmBoard) + 4095) & ~static_cast<size_t>(4095);

size_t fifoOffset(int senderLocalIndex, int stream, int nstreams, size_t footprint) {
  return kBellBytes + kBoardBytes +
         (static_cast<size_t>(senderLocalIndex) * nstreams + stream) * footprint;
}

}  // namespace

size_t shmFifoForNode(size_t wanted, int nlocal, int nstreams) {
  constexpr size_t kSmallest = 64 << 10;
  if (nlocal < 2) return wanted;
  const size_t fifos = static_cast<size_t>(nlocal) * static_cast<size_t>(nlocal - 1) *
                       static_cast<size_t>(nstreams < 1 ? 1 : nstreams);
  size_t fifo = wanted;
  while (fifo / 2 >= kSmallest && fifo * fifos > kShmNodeBudget) fifo /= 2;
  return fifo;
}

weftResult_t ShmTransport::attachPeers(TcpTransport& tcp, Bootstrap& bs,
                                       const std::vector<PeerInfo>& info,
                                       const std::vector<int>& localIndex, int nstreams,
                                       size_t fifoBytes, size_t footprint) {
  const int n = bs.nranks(), me = bs.rank();
  for (int p = 0; p < n; ++p) {
    if (!local_[p]) continue;
    peers_[p] = std::make_unique<ShmSegment>();
    WEFT_CHECK(peers_[p]->attach(info[p].pid, info[p].fd, info[p].bytes, info[p].file));
    auto* peerBell = reinterpret_cast<Doorbell*>(peers_[p]->base());
    bells_[p] = peerBell;
    boards_[p] = reinterpret_cast<ShmBoard*>(peers_[p]->base() + kBellBytes);
    deathFds_.emplace_back(p, tcp.socketFd(p, 0));
    int deathFd = tcp.socketFd(p, 0);
    for (int s = 0; s < nstreams; ++s) {
      // We write into the peer's segment at our slot, and read from ours at theirs.
      char* out = peers_[p]->base() + fifoOffset(localIndex[me], s, nstreams, footprint);
      char* in = mine_.base() + fifoOffset(localIndex[p], s, nstreams, footprint);
      send_[p].push_back(
          std::make_unique<ShmChannel>(out, fifoBytes, true, peerBell, deathFd, bs.peerName(p)));
      recv_[p].push_back(
          std::make_unique<ShmChannel>(in, fifoBytes, false, peerBell, deathFd, bs.peerName(p)));
    }
  }
  return weftSuccess;
}

weftResult_t ShmTransport::setup(Bootstrap& bs, TcpTransport& tcp,
                                 const std::vector<RankPlace>& places, int nstreams,
                                 size_t fifoBytes, bool* usable) {
  *usable = false;
  const int n = bs.nranks(), me = bs.rank();
  std::vector<PeerInfo> info(n);
  for (int r = 0; r < n; ++r)
    info[r] = {places[r].node, static_cast<int32_t>(places[r].pid), -1, 0, {}};
  local_.assign(n, false);
  std::vector<int> localIndex(n, -1);
  for (int r = 0; r < n; ++r) {
    if (info[r].node != info[me].node) continue;
    local_[r] = r != me;
    localIndex[r] = nlocal_++;
  }
  const size_t footprint = shmFifoFootprint(fifoBytes);
  const size_t bytes = fifoOffset(nlocal_, 0, nstreams, footprint);
  WEFT_CHECK(mine_.create(bytes));
  bell_ = new (mine_.base()) Doorbell();
  bell_->openWake();  // where it cannot, mixed waits sleep 1 ms at most (flow_engine.cc)
  boards_.assign(n, nullptr);
  bells_.assign(n, nullptr);
  boards_[me] = new (mine_.base() + kBellBytes) ShmBoard();
  bells_[me] = bell_;
  info[me].fd = mine_.fd();
  info[me].bytes = bytes;
  info[me].file = mine_.fileId();
  WEFT_CHECK(bs.allgather(info.data(), sizeof(PeerInfo)));

  peers_.resize(n);
  send_.resize(n);
  recv_.resize(n);
  // A local peer may be out of reach through /proc/<pid>/fd (a user
  // namespace or ptrace rule denies it, or its pid names another process).
  // That is no error: the ranks agree, and if any failed, none uses shared
  // memory and local peers talk over the network, as with WEFT_SHM_DISABLE=1.
  struct Verdict {
    int32_t ok;
    char why[252];
  };
  std::vector<Verdict> verdicts(n);
  Verdict& mine = verdicts[me];
  // Each channel watches its peer's connection A for the peer's death.
  WEFT_CHECK(tcp.connectNow(local_));
  mine.ok = attachPeers(tcp, bs, info, localIndex, nstreams, fifoBytes, footprint) == weftSuccess;
  std::snprintf(mine.why, sizeof(mine.why), "%s", mine.ok ? "" : lastError().c_str());
  clearError();
  // Also the barrier after which the memfds are no longer needed to attach.
  WEFT_CHECK(bs.allgather(verdicts.data(), sizeof(Verdict)));
  *usable = true;
  for (int r = 0; r < n && *usable; ++r) {
    if (verdicts[r].ok) continue;
    *usable = false;
    verdicts[r].why[sizeof(verdicts[r].why) - 1] = '\0';
    WEFT_WARN(NET, "rank %d: shared memory off, local peers use the network: rank %d: %s", me, r,
              verdicts[r].why);
  }
  if (*usable)
    WEFT_INFO(NET, "rank %d: shared memory with %d local peer(s), %zu B FIFO x %d stream(s)", me,
              nlocal_ - 1, fifoBytes, nstreams);
  return weftSuccess;
}

weftResult_t setUpShmTransport(TransportSetup& setup, std::unique_ptr<Transport>* made) {
  const TransportOptions& o = setup.options;
  const int rank = setup.bootstrap.rank();
  if (setup.bootstrap.nranks() == 1 || !o.shmEnabled) return weftSuccess;
  size_t fifo = o.shmFifoBytes;
  if (!o.shmFifoSet) {
    int nlocal = 0;
    for (const RankPlace& p : setup.places) nlocal += p.node == setup.places[rank].node;
    fifo = shmFifoForNode(fifo, nlocal, o.tcp.nstreams);
  }
  auto shm = std::make_unique<ShmTransport>();
  bool usable = false;
  WEFT_CHECK(shm->setup(setup.bootstrap, *setup.tcp, setup.places, o.tcp.nstreams, fifo, &usable));
  if (usable) *made = std::move(shm);
  return weftSuccess;
}

}  // namespace weft
