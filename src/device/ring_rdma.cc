// One-sided verbs edges of the GPU ring, and GPUDirect RDMA for their slots
// (ring_rdma.h).
#include "device/ring_rdma.h"

#include "base/device_runtime.h"
#include "base/error.h"
#include "core/comm.h"
#include "device/gpu_peer_layout.h"
#include "device/gpu_peer_ring.h"
#include "topo/gdr_pair.h"

namespace weft {
namespace {

// Every host stream to `peer` can carry puts (verbs), in that direction.
bool putsReach(ChannelTable* table, int peer, bool send) {
  for (int s = 0; s < table->nstreams(); ++s) {
    Channel* ch = send ? table->sendChannel(peer, s) : table->recvChannel(peer, s);
    if (ch == nullptr || ch->remoteWrites() == nullptr) return false;
  }
  return true;
}

// GDR for this rank's GPU and the NIC in use; the fake's test hook stands in
// for a topology that places its GPU.
topo::GdrChoice gdrChoice(int device, RdmaMemory* memory) {
  DeviceRuntime* rt = deviceRuntime();
  if (rt->gdrForced()) return topo::GdrChoice{true, "on: allowed by a test hook"};
  std::string why;
  const topo::Topology* t = topo::processTopology(&why);
  return topo::gdrForPair(t, why, rt->gpuName(device), memory->nicName());
}

// GPU slots for one direction, registered; nullptr (and *note says why) when
// either step fails. The allocation is whole 64 KiB GPU pages, so that the
// page-rounded range a dma-buf export or nvidia-peermem pins is all ours.
void* gpuSlots(int device, int channels, RdmaMemory* memory, std::unique_ptr<RdmaRegion>* region,
               std::string* note) {
  DeviceRuntime* rt = deviceRuntime();
  constexpr size_t kGpuPage = 64 << 10;
  const size_t bytes = ringMemoryBytes(channels);
  void* slots = nullptr;
  GpuExport unused{};
  if (rt->allocDevice(device, (bytes + kGpuPage - 1) / kGpuPage * kGpuPage, &slots, &unused) !=
      weftSuccess) {
    *note += "GPU memory for the slots: " + lastError() + "; ";
    return nullptr;
  }
  std::string why;
  *region = memory->registerRegion(slots, bytes, true, &why);
  if (*region == nullptr) {
    *note += "registering GPU memory: " + why + "; ";
    rt->freeDevice(slots);
    return nullptr;
  }
  return slots;
}

// Kernel channels of one direction onto the GPU slots.
void pointAtGpu(dev::Channel* channels, int n, void* slots) {
  for (int c = 0; c < n; ++c)
    channels[c].slots = static_cast<unsigned char*>(slots) + ringRegionOffset(c) + kRingSlotsOffset;
}

}  // namespace

void offerRingRdma(weftComm* comm, GpuPeerRing* ring, RingRdmaOffer* offer) {
  *offer = RingRdmaOffer{};
  RdmaMemory* memory = comm->ib ? comm->ib->rdma() : nullptr;
  RingRdma& rdma = ring->rdma;
  if (memory == nullptr || (ring->outbox == nullptr && ring->inbox == nullptr)) return;
  ChannelTable* table = comm->channels.get();
  const size_t bytes = ringMemoryBytes(ring->channels);
  std::string why;
  const bool out = ring->outbox != nullptr && putsReach(table, ring->nextRank, true);
  const bool in = ring->inbox != nullptr && putsReach(table, ring->prevRank, false);
  if (out) {
    rdma.outboxHost = memory->registerRegion(ring->outbox, bytes, false, &why);
    if (rdma.outboxHost == nullptr) rdma.note += "outbox: " + why + "; ";
  }
  if (in) {
    rdma.inboxHost = memory->registerRegion(ring->inbox, bytes, false, &why);
    if (rdma.inboxHost == nullptr) rdma.note += "inbox: " + why + "; ";
  }
  offer->sendPuts = rdma.outboxHost != nullptr ? 1 : 0;
  offer->recvPuts = rdma.inboxHost != nullptr ? 1 : 0;
  if (offer->sendPuts == 0 && offer->recvPuts == 0) return;
  const topo::GdrChoice gdr = gdrChoice(ring->device, memory);
  rdma.note += "GDR " + gdr.reason + "; ";
  if (gdr.on && offer->sendPuts != 0)
    rdma.outboxGpu =
        gpuSlots(ring->device, ring->channels, memory, &rdma.outboxGpuRegion, &rdma.note);
  if (gdr.on && offer->recvPuts != 0)
    rdma.inboxGpu =
        gpuSlots(ring->device, ring->channels, memory, &rdma.inboxGpuRegion, &rdma.note);
  const RdmaRegion* target =
      rdma.inboxGpu != nullptr ? rdma.inboxGpuRegion.get() : rdma.inboxHost.get();
  if (target != nullptr) {
    offer->recvGpu = target->gpu ? 1 : 0;
    offer->recvRkey = target->rkey;
    offer->recvAddr = target->nicAddr;
  }
}

void settleRingRdma(GpuPeerRing* ring, RdmaMemory* memory, const RingRdmaOffer& mine,
                    const RingRdmaOffer& next, const RingRdmaOffer& prev) {
  RingRdma& rdma = ring->rdma;
  DeviceRuntime* rt = deviceRuntime();
  rdma.sendPuts = mine.sendPuts != 0 && next.recvPuts != 0;
  rdma.recvPuts = mine.recvPuts != 0 && prev.sendPuts != 0;
  if (rdma.sendPuts) {
    const bool gpu = rdma.outboxGpu != nullptr;
    const RdmaRegion& from = gpu ? *rdma.outboxGpuRegion : *rdma.outboxHost;
    ring->proxy.sendByPut(from.nicAddr, from.lkey, next.recvAddr, next.recvRkey);
    if (gpu) pointAtGpu(ring->send, ring->channels, rdma.outboxGpu);
    rdma.note += std::string("to rank ") + std::to_string(ring->nextRank) + ": RDMA writes from " +
                 from.how + " into " + (next.recvGpu != 0 ? "its GPU memory" : "its host memory") +
                 "; ";
  }
  if (rdma.recvPuts) {
    const bool gpu = rdma.inboxGpu != nullptr;
    const RdmaRegion* into = gpu ? rdma.inboxGpuRegion.get() : rdma.inboxHost.get();
    ring->proxy.landByPut(gpu, [memory, into] { return memory->flush(*into); });
    if (gpu) pointAtGpu(ring->recv, ring->channels, rdma.inboxGpu);
    rdma.note += std::string("from rank ") + std::to_string(ring->prevRank) +
                 ": RDMA writes into " + into->how + "; ";
  }
  // What no edge uses goes.
  if (!rdma.sendPuts) rdma.outboxHost.reset();
  if (!rdma.recvPuts) rdma.inboxHost.reset();
  if (!rdma.sendPuts && rdma.outboxGpu != nullptr) {
    rdma.outboxGpuRegion.reset();
    rt->freeDevice(rdma.outboxGpu);
    rdma.outboxGpu = nullptr;
  }
  if (!rdma.recvPuts && rdma.inboxGpu != nullptr) {
    rdma.inboxGpuRegion.reset();
    rt->freeDevice(rdma.inboxGpu);
    rdma.inboxGpu = nullptr;
  }
}

void releaseRingRdma(RingRdma* rdma) {
  DeviceRuntime* rt = deviceRuntime();
  rdma->outboxHost.reset();
  rdma->inboxHost.reset();
  rdma->outboxGpuRegion.reset();
  rdma->inboxGpuRegion.reset();
  if (rdma->outboxGpu != nullptr) rt->freeDevice(rdma->outboxGpu);
  if (rdma->inboxGpu != nullptr) rt->freeDevice(rdma->inboxGpu);
  rdma->outboxGpu = rdma->inboxGpu = nullptr;
  rdma->sendPuts = rdma->recvPuts = false;
  rdma->note.clear();
}

}  // namespace weft
