// Setting up and closing the GPU ring's peer-memory edges (gpu_peer_ring.h): who
// may use it, the FIFO memory and its layout, and the three bootstrap
// allgathers that make every rank take the same decision.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/device_runtime.h"
#include "base/error.h"
#include "base/log.h"
#include "collectives/kernels/ring_call.h"
#include "core/comm.h"
#include "device/gpu_peer_layout.h"
#include "device/gpu_peer_ring.h"
#include "device/staging_pool.h"

namespace weft {
namespace {

// Round one: can this rank take part, and where its memory is.
struct Vote {
  int32_t ok;
  int32_t device;
  int32_t channels;  // WEFT_MAX_CTAS: every rank must have the same
  int32_t pad;
  GpuExport memory;  // its pid tells which ranks share a process
  char gpu[32];      // the runtime's name of the GPU ("" for the fake)
  char why[160];
};
// Round two: which neighbours on our node this rank could not map (their
// edges then go through the host proxy as well, over shared memory).
struct Mapped {
  int32_t nextUnmapped;
  int32_t prevUnmapped;
  char why[160];
};
// Round three: is this rank's side of every edge ready, and what it offers
// for one-sided writes over verbs.
struct Ready {
  int32_t ok;
  int32_t pad;
  RingRdmaOffer rdma;
  char why[160];
};

template <size_t N>
void copyText(char (&dst)[N], const std::string& text) {
  std::snprintf(dst, N, "%s", text.c_str());
}

std::string whyNot(weftComm* comm) {
  if (!comm->config.gpuRing) return "WEFT_GPU_RING=0";
  return deviceRuntime()->whyNoRing();
}

// Every rank's `mine` into all[0..nranks) (bootstrap allgather: init time).
template <typename T>
weftResult_t gather(weftComm* comm, const T& mine, std::vector<T>* all) {
  all->assign(static_cast<size_t>(comm->nranks), T{});
  (*all)[static_cast<size_t>(comm->rank)] = mine;
  return comm->bootstrap->allgather(all->data(), sizeof(T));
}

// Two ranks of different processes on one GPU: their kernels would take
// turns on it (no two contexts run at once without MPS), each ring step
// waiting a time slice. Ranks of one process share its context: fine.
// WEFT_GPU_RING=shared skips this check: under MPS the kernels do run
// together, and on one GPU it is how CUDA IPC between processes is tested.
std::string sharedGpu(const std::vector<Vote>& votes, const std::vector<RankPlace>& places) {
  for (size_t j = 0; j < votes.size(); ++j)
    for (size_t k = j + 1; k < votes.size(); ++k)
      if (places[j].node == places[k].node && votes[j].gpu[0] != '\0' &&
          std::strcmp(votes[j].gpu, votes[k].gpu) == 0 &&
          votes[j].memory.pid != votes[k].memory.pid)
        return "ranks " + std::to_string(j) + " and " + std::to_string(k) +
               " are separate processes on one GPU (" + votes[j].gpu +
               "), whose kernels would take turns on it";
  return "";
}

void release(GpuPeerRing& ring) {
  DeviceRuntime* rt = deviceRuntime();
  releaseRingRdma(&ring.rdma);
  if (ring.prev != nullptr && ring.prev != ring.next) rt->closePeer(ring.prev);
  if (ring.next != nullptr) rt->closePeer(ring.next);
  if (ring.mine != nullptr) rt->freeDevice(ring.mine);
  if (ring.outbox != nullptr) rt->freePinned(ring.outbox);
  if (ring.inbox != nullptr) rt->freePinned(ring.inbox);
  if (ring.rankAt != nullptr) rt->freePinned(ring.rankAt);
  ring.prev = ring.next = ring.mine = ring.outbox = ring.inbox = nullptr;
  ring.rankAt = nullptr;
  ring.rankAtDevice = nullptr;
}

void turnOff(weftComm* comm, const std::string& why) {
  release(comm->peerRing);
  comm->peerRing.state = GpuPeerRing::State::kOff;
  comm->peerRing.offWhy = why;
  WEFT_INFO(COLL, "rank %d: collectives on a stream are host-staged: %s", comm->rank, why.c_str());
}

// Argument blocks of the ring calls (staging_pool.h's reserve): allocated
// here, so that a call with no more than this many of its communicator's
// calls in flight allocates no pinned memory while enqueuing.
constexpr size_t kReservedCallBlocks = 8;  // 8 x 4 KiB

weftResult_t reserveCallBlocks(weftComm* comm) {
  if (!comm->streamStaging) comm->streamStaging.reset(new StagingPool(deviceRuntime()));
  return comm->streamStaging->reserve(sizeof(dev::RingCall), kReservedCallBlocks);
}

// Pinned host FIFOs for a network edge (the proxy's side of it), zeroed.
weftResult_t allocProxyFifos(int channels, void** fifos) {
  const size_t bytes = ringMemoryBytes(channels);
  WEFT_CHECK(deviceRuntime()->allocPinned(bytes, fifos));
  std::memset(*fifos, 0, bytes);
  return weftSuccess;
}

// Where a FIFO's pieces sit in a region, at device address `base`.
void placeFifo(unsigned char* base, size_t at, dev::Channel* ch) {
  ch->slots = base + at + kRingSlotsOffset;
  ch->sizes = reinterpret_cast<uint64_t*>(base + at + kRingSizesOffset);
  ch->tail = reinterpret_cast<uint64_t*>(base + at + kRingTailOffset);
}

// The channels of CTA c once both neighbours' memory is mapped (or, across
// nodes, the proxy's FIFOs are allocated).
weftResult_t buildChannels(GpuPeerRing& ring) {
  DeviceRuntime* rt = deviceRuntime();
  auto* mine = static_cast<unsigned char*>(ring.mine);
  unsigned char* outbox = nullptr;  // device addresses of the proxy FIFOs
  unsigned char* inbox = nullptr;
  const void* at = nullptr;
  if (ring.outbox != nullptr) {
    WEFT_CHECK(rt->deviceAddress(ring.outbox, &at));
    outbox = static_cast<unsigned char*>(const_cast<void*>(at));
  }
  if (ring.inbox != nullptr) {
    WEFT_CHECK(rt->deviceAddress(ring.inbox, &at));
    inbox = static_cast<unsigned char*>(const_cast<void*>(at));
  }
  for (int c = 0; c < ring.channels; ++c) {
    const size_t at = ringRegionOffset(c);
    dev::Channel& s = ring.send[c];  // into the next rank's incoming FIFO, or our outbox
    if (outbox != nullptr) {
      placeFifo(outbox, at, &s);
      s.head = reinterpret_cast<uint64_t*>(outbox + at + kRingHeadOffset);  // the proxy's credit
    } else {
      placeFifo(static_cast<unsigned char*>(ring.next), at, &s);
      s.head = reinterpret_cast<uint64_t*>(mine + at + kRingHeadOffset);
    }
    dev::Channel& r = ring.recv[c];  // our incoming FIFO, or our inbox
    if (inbox != nullptr) {
      placeFifo(inbox, at, &r);
      r.head = reinterpret_cast<uint64_t*>(inbox + at + kRingHeadOffset);  // read by the proxy
    } else {
      placeFifo(mine, at, &r);
      r.head = reinterpret_cast<uint64_t*>(static_cast<unsigned char*>(ring.prev) + at +
                                           kRingHeadOffset);  // credits into its memory
    }
    s.nslots = r.nslots = kRingSlots;
    s.slotBytes = r.slotBytes = kRingSlotBytes;
    s.abort = r.abort = nullptr;  // set per call
  }
  return weftSuccess;
}

// Maps the neighbours on our node. A mapping that fails (no peer access
// between the GPUs, say) is not fatal: that edge will go through the proxy.
void mapNeighbours(weftComm* comm, int device, const std::vector<Vote>& votes, Mapped* mapped) {
  GpuPeerRing& ring = comm->peerRing;
  DeviceRuntime* rt = deviceRuntime();
  const uint64_t node = comm->places[static_cast<size_t>(comm->rank)].node;
  std::string why;
  auto map = [&](int rank, void** at) {
    if (comm->places[static_cast<size_t>(rank)].node != node) return true;  // away: no mapping
    if (rt->openPeer(device, votes[rank].memory, at) == weftSuccess) return true;
    *at = nullptr;
    why += "mapping rank " + std::to_string(rank) + "'s memory: " + lastError() + "; ";
    return false;
  };
  mapped->nextUnmapped = map(ring.nextRank, &ring.next) ? 0 : 1;
  if (ring.prevRank == ring.nextRank) {
    ring.prev = ring.next;
    mapped->prevUnmapped = mapped->nextUnmapped;
  } else {
    mapped->prevUnmapped = map(ring.prevRank, &ring.prev) ? 0 : 1;
  }
  copyText(mapped->why, why);
}

// Decides every edge of ours alike with its other end (p2p when both ends
// are on one node and both mapped, else the proxy), drops the mappings no
// edge uses, makes the proxy FIFOs and the channels; false with *why.
bool buildEdges(weftComm* comm, const std::vector<Mapped>& all, std::string* why) {
  GpuPeerRing& ring = comm->peerRing;
  DeviceRuntime* rt = deviceRuntime();
  const uint64_t node = comm->places[static_cast<size_t>(comm->rank)].node;
  auto away = [&](int rank) { return comm->places[static_cast<size_t>(rank)].node != node; };
  const Mapped& me = all[static_cast<size_t>(comm->rank)];
  const bool outProxy = away(ring.nextRank) || me.nextUnmapped ||
                        all[static_cast<size_t>(ring.nextRank)].prevUnmapped;
  const bool inProxy = away(ring.prevRank) || me.prevUnmapped ||
                       all[static_cast<size_t>(ring.prevRank)].nextUnmapped;
  void* next = outProxy ? nullptr : ring.next;  // the mappings our edges keep
  void* prev = inProxy ? nullptr : ring.prev;
  if (ring.next != nullptr && ring.next != next && ring.next != prev) rt->closePeer(ring.next);
  if (ring.prev != nullptr && ring.prev != ring.next && ring.prev != prev && ring.prev != next)
    rt->closePeer(ring.prev);
  ring.next = next;
  ring.prev = prev;
  auto failed = [&](const std::string& what) {
    *why = what + ": " + lastError();
    return false;
  };
  if (outProxy && allocProxyFifos(ring.channels, &ring.outbox) != weftSuccess)
    return failed("pinned memory for the proxy to rank " + std::to_string(ring.nextRank));
  if (inProxy && allocProxyFifos(ring.channels, &ring.inbox) != weftSuccess)
    return failed("pinned memory for the proxy from rank " + std::to_string(ring.prevRank));
  if (buildChannels(ring) != weftSuccess) return failed("the proxy FIFOs' device address");
  // The ring order, for collectives that place blocks by rank (ring_block_schedule.h).
  void* order = nullptr;
  const void* orderDevice = nullptr;
  if (rt->allocPinned(sizeof(int32_t) * static_cast<size_t>(comm->nranks), &order) != weftSuccess)
    return failed("pinned memory for the ring order");
  ring.rankAt = static_cast<int32_t*>(order);
  for (int p = 0; p < comm->nranks; ++p) ring.rankAt[p] = comm->topo.ring->member(p);
  if (rt->deviceAddress(order, &orderDevice) != weftSuccess)
    return failed("the ring order's device address");
  ring.rankAtDevice = static_cast<const int32_t*>(orderDevice);
  // The proxy keeps its channels for the ring's life, so it takes TCP's
  // small-call ones: they do not change with a host call's size.
  ring.proxy.init(comm->headerChannels.get(), ring.channels, ring.nextRank, ring.prevRank,
                  static_cast<unsigned char*>(ring.outbox),
                  static_cast<unsigned char*>(ring.inbox));
  // Why an edge inside our node goes through the proxy (for the INFO line).
  std::vector<int> told;
  auto tell = [&](int rank) {
    if (all[static_cast<size_t>(rank)].why[0] == '\0') return;
    if (std::find(told.begin(), told.end(), rank) != told.end()) return;
    told.push_back(rank);
    ring.proxyWhy += "rank " + std::to_string(rank) + ": " + all[static_cast<size_t>(rank)].why;
  };
  if (outProxy && !away(ring.nextRank)) {
    tell(comm->rank);
    tell(ring.nextRank);
  }
  if (inProxy && !away(ring.prevRank)) {
    tell(comm->rank);
    tell(ring.prevRank);
  }
  return true;
}

// The INFO line's account of the network edges.
std::string proxyNote(const GpuPeerRing& ring) {
  std::string note;
  if (ring.outbox != nullptr)
    note += "; to rank " + std::to_string(ring.nextRank) + " through the host proxy";
  if (ring.inbox != nullptr)
    note += "; from rank " + std::to_string(ring.prevRank) + " through the host proxy";
  if (!ring.proxyWhy.empty()) note += " (peer access failed: " + ring.proxyWhy + ")";
  if (!ring.rdma.note.empty()) note += "; verbs: " + ring.rdma.note;
  return note;
}

// Every rank votes: may it take part (a CUDA device, the kernels, the ring's
// memory), with how many channels, on which GPU. *on false: the ring is
// turned off (turnOff says why), which is no error.
weftResult_t voteOnRing(weftComm* comm, int* device, std::vector<Vote>* votes, bool* on) {
  GpuPeerRing& ring = comm->peerRing;
  DeviceRuntime* rt = deviceRuntime();
  *on = false;
  Vote mine{};
  std::string why = whyNot(comm);
  if (why.empty() && rt->currentDevice(device) != weftSuccess)
    why = "no current CUDA device: " + lastError();
  ring.channels = comm->config.maxCtas;
  if (why.empty() && rt->prepareKernels(*device) != weftSuccess) why = lastError();
  if (why.empty() && rt->allocDevice(*device, ringMemoryBytes(ring.channels), &ring.mine,
                                     &mine.memory) != weftSuccess)
    why = lastError();
  mine.ok = why.empty() ? 1 : 0;
  mine.device = *device;
  mine.channels = ring.channels;
  if (why.empty()) copyText(mine.gpu, rt->gpuName(*device));
  copyText(mine.why, why);
  weftResult_t r = gather(comm, mine, votes);
  if (r != weftSuccess) {
    turnOff(comm, "its setup failed: " + lastError());
    return r;
  }
  for (int k = 0; k < comm->nranks; ++k) {
    const Vote& v = (*votes)[k];
    if (!v.ok) {
      turnOff(comm, "rank " + std::to_string(k) + ": " + v.why);
      return weftSuccess;
    }
    if (v.channels != ring.channels) {
      turnOff(comm, "ranks disagree on WEFT_MAX_CTAS (" + std::to_string(v.channels) + " on rank " +
                        std::to_string(k) + ", " + std::to_string(ring.channels) + " here)");
      return weftSuccess;
    }
  }
  const std::string shared = comm->config.gpuRingShared ? "" : sharedGpu(*votes, comm->places);
  if (!shared.empty()) {
    turnOff(comm, shared);
    return weftSuccess;
  }
  *on = true;
  return weftSuccess;
}

// Maps both neighbours, builds the edges (peer memory or the host proxy) and
// the call blocks, and gathers every rank's readiness into *readies. *on
// false: some rank could not, and the ring is turned off.
weftResult_t connectRing(weftComm* comm, int device, const std::vector<Vote>& votes,
                         std::vector<Ready>* readies, bool* on) {
  GpuPeerRing& ring = comm->peerRing;
  const int n = comm->nranks;
  *on = false;
  ring.device = device;
  ring.pos = comm->topo.ringPos;
  ring.nextRank = comm->topo.ring->member((ring.pos + 1) % n);
  ring.prevRank = comm->topo.ring->member((ring.pos + n - 1) % n);
  Mapped mapped{};
  mapNeighbours(comm, device, votes, &mapped);
  std::vector<Mapped> all;
  weftResult_t r = gather(comm, mapped, &all);
  if (r != weftSuccess) {
    turnOff(comm, "its setup failed: " + lastError());
    return r;
  }
  Ready ready{};
  ready.ok = 1;
  std::string failure;
  if (!buildEdges(comm, all, &failure)) {
    ready.ok = 0;
    copyText(ready.why, failure);
  } else if (reserveCallBlocks(comm) != weftSuccess) {
    ready.ok = 0;
    copyText(ready.why, "pinned memory for its calls' arguments: " + lastError());
  } else {
    offerRingRdma(comm, &ring, &ready.rdma);
  }
  r = gather(comm, ready, readies);
  if (r != weftSuccess) {
    turnOff(comm, "its setup failed: " + lastError());
    return r;
  }
  for (int k = 0; k < n; ++k) {
    if (!(*readies)[k].ok) {
      turnOff(comm, "rank " + std::to_string(k) + ": " + (*readies)[k].why);
      return weftSuccess;
    }
  }
  *on = true;
  return weftSuccess;
}

// Every rank: may it take part, then (all may) map both neighbours.
weftResult_t setUp(weftComm* comm) {
  GpuPeerRing& ring = comm->peerRing;
  int device = -1;
  bool on = false;
  std::vector<Vote> votes;
  WEFT_CHECK(voteOnRing(comm, &device, &votes, &on));
  if (!on) return weftSuccess;
  std::vector<Ready> readies;
  WEFT_CHECK(connectRing(comm, device, votes, &readies, &on));
  if (!on) return weftSuccess;
  settleRingRdma(&ring, comm->ib ? comm->ib->rdma() : nullptr, readies[comm->rank].rdma,
                 readies[ring.nextRank].rdma, readies[ring.prevRank].rdma);
  ring.state = GpuPeerRing::State::kOn;
  WEFT_INFO(COLL,
            "rank %d: allreduce, allgather, reduce-scatter, broadcast and reduce on a stream run "
            "the GPU ring kernel on device %d: up to %d CTAs, %u slots of %u bytes per channel%s",
            comm->rank, device, ring.channels, kRingSlots, kRingSlotBytes, proxyNote(ring).c_str());
  return weftSuccess;
}

}  // namespace

weftResult_t setUpGpuPeerRing(weftComm* comm) {
  if (comm->nranks < 2) {
    comm->peerRing.state = GpuPeerRing::State::kOff;
    comm->peerRing.offWhy = "a single rank";
    return weftSuccess;
  }
  return setUp(comm);
}

void closeGpuPeerRing(weftComm* comm, bool streamsPast) {
  GpuPeerRing& ring = comm->peerRing;
  if (ring.state != GpuPeerRing::State::kOn) return;
  if (streamsPast) {
    release(ring);
  } else {
    WEFT_INFO(COLL, "rank %d: a stream may still run a ring kernel: its FIFO memory is left mapped",
              comm->rank);
  }
  ring.state = GpuPeerRing::State::kOff;
}

}  // namespace weft
