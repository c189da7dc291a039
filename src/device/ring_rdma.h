// The GPU ring's network edges over verbs, written one-sided (the "put" frames
// of ring_proxy.h): the sending proxy RDMA-writes each message from its outbox
// slot straight into the receiver's inbox slot, so no host copies the payload
// and only a 16-byte frame follows on the stream. Where GPUDirect RDMA is on
// for this rank's GPU and NIC (topo/gdr_pair.h, WEFT_NET_GDR_LEVEL) and the
// NIC can register GPU memory (dma-buf, else nvidia-peermem:
// transports/ib/ib_memory.h), those slots are GPU memory: the kernel writes and
// reads its own GPU, and the NIC moves the bytes between the GPUs; a receiver
// flushes the NIC's writes before its kernel is told. Otherwise the slots stay
// in the pinned host FIFOs and the NIC reads and writes those.
//
// Decided per edge, alike at both ends: the third bootstrap allgather of
// gpu_peer_ring.cc carries every rank's offer. An edge is written one-sided when
// its sender can (every host stream to rank + 1 is a verbs channel and its
// outbox registered) and its receiver takes it (its inbox registered); the
// receiver's offer says where to write. Otherwise the edge keeps payload
// frames through the host FIFOs (TCP, shared memory, or a failed
// registration, which the INFO line names).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transports/rdma_memory.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

struct GpuPeerRing;

// One rank's offer, in the allgather (fixed layout, host byte order).
struct RingRdmaOffer {
  int32_t sendPuts;   // we can write one-sided to rank + 1
  int32_t recvPuts;   // rank - 1 may write one-sided into our inbox slots:
  int32_t recvGpu;    // they are GPU memory
  uint32_t recvRkey;  // with this key,
  uint64_t recvAddr;  // at this NIC address (the region's p2p layout offsets apply)
};

// What the ring keeps of it (released with the ring).
struct RingRdma {
  std::unique_ptr<RdmaRegion> outboxHost, inboxHost;  // the pinned host FIFOs
  void* outboxGpu = nullptr;                          // GPU slots (GDR), same layout
  void* inboxGpu = nullptr;
  std::unique_ptr<RdmaRegion> outboxGpuRegion, inboxGpuRegion;
  bool sendPuts = false, recvPuts = false;  // as settled with the neighbours
  std::string note;                         // for the ring's INFO line
};

// Before the allgather, once the proxy FIFOs exist: registers what this rank
// can and fills *offer. Never fails: an edge that cannot be written
// one-sided keeps the frames.
void offerRingRdma(weftComm* comm, GpuPeerRing* ring, RingRdmaOffer* offer);
// After it, with the offers of rank + 1 and rank - 1: sets the proxy's put
// modes and points the kernel's channels at the GPU slots where those carry
// the edge; frees what no edge uses.
void settleRingRdma(GpuPeerRing* ring, RdmaMemory* memory, const RingRdmaOffer& mine,
                    const RingRdmaOffer& next, const RingRdmaOffer& prev);
void releaseRingRdma(RingRdma* rdma);

}  // namespace weft
