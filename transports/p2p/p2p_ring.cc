// Setting up and closing the p2p transport of the GPU ring (p2p_ring.h): who
// may use it, the FIFO memory and its layout, and the two bootstrap
// allgathers that make every rank take the same decision.
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/comm.h"
#include "core/error.h"
#include "core/log.h"
#include "device/device_runtime.h"
#include "transports/p2p/p2p_layout.h"
#include "transports/p2p/p2p_ring.h"

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
// Round two: did this rank map both neighbours' memory.
struct Mapped {
  int32_t ok;
  char why[160];
};

template <size_t N>
void copyText(char (&dst)[N], const std::string& text) {
  std::snprintf(dst, N, "%s", text.c_str());
}

std::string whyNot(weftComm* comm) {
  if (!comm->config.gpuRing) return "WEFT_GPU_RING=0";
  if (comm->topo.nnodes > 1) return "its ranks are on several nodes";
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
std::string sharedGpu(const std::vector<Vote>& votes) {
  for (size_t j = 0; j < votes.size(); ++j)
    for (size_t k = j + 1; k < votes.size(); ++k)
      if (votes[j].gpu[0] != '\0' && std::strcmp(votes[j].gpu, votes[k].gpu) == 0 &&
          votes[j].memory.pid != votes[k].memory.pid)
        return "ranks " + std::to_string(j) + " and " + std::to_string(k) +
               " are separate processes on one GPU (" + votes[j].gpu +
               "), whose kernels would take turns on it";
  return "";
}

void release(P2pRing& ring) {
  DeviceRuntime* rt = deviceRuntime();
  if (ring.prev != nullptr && ring.prev != ring.next) rt->closePeer(ring.prev);
  if (ring.next != nullptr) rt->closePeer(ring.next);
  if (ring.mine != nullptr) rt->freeDevice(ring.mine);
  ring.prev = ring.next = ring.mine = nullptr;
}

void turnOff(weftComm* comm, const std::string& why) {
  release(comm->p2pRing);
  comm->p2pRing.state = P2pRing::State::kOff;
  comm->p2pRing.offWhy = why;
  WEFT_INFO(COLL, "rank %d: allreduce on a stream is host-staged: %s", comm->rank, why.c_str());
}

// The channels of CTA c once both neighbours' memory is mapped.
void buildChannels(P2pRing& ring) {
  auto* mine = static_cast<unsigned char*>(ring.mine);
  auto* next = static_cast<unsigned char*>(ring.next);
  auto* prev = static_cast<unsigned char*>(ring.prev);
  for (int c = 0; c < ring.channels; ++c) {
    const size_t at = ringRegionOffset(c);
    dev::Channel& s = ring.send[c];  // into rank + 1's incoming FIFO
    s.slots = next + at + kRingSlotsOffset;
    s.sizes = reinterpret_cast<uint64_t*>(next + at + kRingSizesOffset);
    s.tail = reinterpret_cast<uint64_t*>(next + at + kRingTailOffset);
    s.head = reinterpret_cast<uint64_t*>(mine + at + kRingHeadOffset);
    dev::Channel& r = ring.recv[c];  // our incoming FIFO; credits into rank - 1's memory
    r.slots = mine + at + kRingSlotsOffset;
    r.sizes = reinterpret_cast<uint64_t*>(mine + at + kRingSizesOffset);
    r.tail = reinterpret_cast<uint64_t*>(mine + at + kRingTailOffset);
    r.head = reinterpret_cast<uint64_t*>(prev + at + kRingHeadOffset);
    s.nslots = r.nslots = kRingSlots;
    s.slotBytes = r.slotBytes = kRingSlotBytes;
    s.abort = r.abort = nullptr;  // set per call
  }
}

// Every rank: may it take part, then (all may) map both neighbours.
weftResult_t setUp(weftComm* comm) {
  P2pRing& ring = comm->p2pRing;
  DeviceRuntime* rt = deviceRuntime();
  const int n = comm->nranks;
  int device = -1;
  Vote mine{};
  std::string why = whyNot(comm);
  if (why.empty() && rt->currentDevice(&device) != weftSuccess)
    why = "no current CUDA device: " + lastError();
  ring.channels = comm->config.maxCtas;
  if (why.empty() && rt->allocDevice(device, ringMemoryBytes(ring.channels), &ring.mine,
                                     &mine.memory) != weftSuccess)
    why = lastError();
  mine.ok = why.empty() ? 1 : 0;
  mine.device = device;
  mine.channels = ring.channels;
  if (why.empty()) copyText(mine.gpu, rt->gpuName(device));
  copyText(mine.why, why);
  std::vector<Vote> votes;
  weftResult_t r = gather(comm, mine, &votes);
  if (r != weftSuccess) {
    turnOff(comm, "its setup failed: " + lastError());
    return r;
  }
  for (int k = 0; k < n; ++k) {
    if (!votes[k].ok) {
      turnOff(comm, "rank " + std::to_string(k) + ": " + votes[k].why);
      return weftSuccess;
    }
    if (votes[k].channels != ring.channels) {
      turnOff(comm, "ranks disagree on WEFT_MAX_CTAS (" + std::to_string(votes[k].channels) +
                        " on rank " + std::to_string(k) + ", " + std::to_string(ring.channels) +
                        " here)");
      return weftSuccess;
    }
  }
  const std::string shared = sharedGpu(votes);
  if (!shared.empty()) {
    turnOff(comm, shared);
    return weftSuccess;
  }
  ring.device = device;
  const int next = (comm->rank + 1) % n, prev = (comm->rank + n - 1) % n;
  Mapped mapped{1, {}};
  if (rt->openPeer(device, votes[next].memory, &ring.next) != weftSuccess) {
    mapped.ok = 0;
    copyText(mapped.why, "mapping rank " + std::to_string(next) + "'s memory: " + lastError());
  } else if (prev == next) {
    ring.prev = ring.next;
  } else if (rt->openPeer(device, votes[prev].memory, &ring.prev) != weftSuccess) {
    mapped.ok = 0;
    copyText(mapped.why, "mapping rank " + std::to_string(prev) + "'s memory: " + lastError());
  }
  std::vector<Mapped> all;
  r = gather(comm, mapped, &all);
  if (r != weftSuccess) {
    turnOff(comm, "its setup failed: " + lastError());
    return r;
  }
  for (int k = 0; k < n; ++k) {
    if (!all[k].ok) {
      turnOff(comm, "rank " + std::to_string(k) + ": " + all[k].why);
      return weftSuccess;
    }
  }
  buildChannels(ring);
  ring.state = P2pRing::State::kOn;
  WEFT_INFO(COLL,
            "rank %d: allreduce on a stream runs the GPU ring kernel on device %d: up to %d CTAs, "
            "%u slots of %u bytes per channel",
            comm->rank, device, ring.channels, kRingSlots, kRingSlotBytes);
  return weftSuccess;
}

}  // namespace

weftResult_t setUpP2pRing(weftComm* comm) {
  if (comm->nranks < 2) {
    comm->p2pRing.state = P2pRing::State::kOff;
    comm->p2pRing.offWhy = "a single rank";
    return weftSuccess;
  }
  return setUp(comm);
}

void closeP2pRing(weftComm* comm, bool streamsPast) {
  P2pRing& ring = comm->p2pRing;
  if (ring.state != P2pRing::State::kOn) return;
  if (streamsPast) {
    release(ring);
  } else {
    WEFT_INFO(COLL, "rank %d: a stream may still run a ring kernel: its FIFO memory is left mapped",
              comm->rank);
  }
  ring.state = P2pRing::State::kOff;
}

}  // namespace weft
