// The GPU ring's peer-memory edges (CUDA IPC over NVLink or PCIe, or
// through the host proxy across nodes): per communicator, a ring of one-way channels between the
// ranks' GPUs, in the channel contract's form (FIFO slots, size words, tail and head counters), for
// the CUDA executor's kernel (src/device/device_ring.h). Only kernels use these channels; host
// calls keep the host transports.
//
// Memory: each rank allocates on its GPU, per channel (one per CTA), its
// incoming FIFO (slots, size words, `tail`) and the `head` counter of its
// outgoing channel (layout: gpu_peer_layout.h), so that every wait polls local
// memory and every remote access is a write: a rank writes slots and `tail`
// into its next rank's memory, and `head` into its previous rank's. Peers
// map it through CUDA IPC (NVLink or PCIe peer-to-peer, peer access enabled
// lazily); ranks of one process use the pointers themselves.
//
// Set up at communicator init on the current CUDA device (as an NCCL
// communicator is bound to its device), or turned off on every rank, with
// the reason logged at INFO, when any rank cannot take part: its runtime has
// no ring kernel or its process had not loaded CUDA (the GPU must be selected
// before the communicator is created), separate
// processes on one GPU (their kernels would take turns on it), pinned memory
// that cannot be had, WEFT_GPU_RING=0 or a different WEFT_MAX_CTAS anywhere.
// Three bootstrap allgathers make every rank take the same decision.
//
// The ring visits the ranks in the order of the communicator's ring view
// (collectives/comm_topo.h: each node's ranks together), so it crosses each
// node boundary once. Such a network edge has no peer mapping: the kernel
// posts into, or reads from, FIFOs in pinned host memory that the host proxy
// (ring_proxy.h) carries over the host channels (TCP or verbs; over verbs
// the NIC writes the messages one-sided, from and into GPU memory where
// GPUDirect RDMA is on: ring_rdma.h). An edge
// inside a node whose peer mapping fails on either end (no peer access
// between the two GPUs) goes the same way, over shared memory.
#pragma once

#include <cstdint>
#include <string>

#include "device/ring_proxy.h"
#include "device/ring_rdma.h"
#include "weft/device/channel.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

constexpr int kMaxPeerRingChannels = 32;  // = dev::kMaxRingCtas (checked in device_ring_call.cc)

struct GpuPeerRing {
  enum class State { kUnset, kOn, kOff };
  State state = State::kUnset;
  std::string offWhy;                // kOff: why every rank stages instead
  int device = -1;                   // the GPU whose memory holds our FIFOs and runs our kernels
  int channels = 0;                  // one per CTA
  int pos = 0;                       // our place in the ring (the kernel's "rank")
  int nextRank = -1, prevRank = -1;  // the ranks after and before us in the ring
  void* mine = nullptr;
  void* next = nullptr;       // the next rank's memory, mapped (nullptr: on another node)
  void* prev = nullptr;       // the previous rank's (the same mapping when they are one rank)
  void* outbox = nullptr;     // pinned host FIFOs to the next rank when it is on another node
  void* inbox = nullptr;      // from the previous rank when it is on another node
  RingProxy proxy;            // carries the outbox and inbox over the host channels
  RingRdma rdma;              // verbs edges: one-sided writes, GPU slots (ring_rdma.h)
  std::string proxyWhy;       // why an edge inside a node uses the proxy ("": none does)
  int32_t* rankAt = nullptr;  // pinned: [ring position] -> rank
  const int32_t* rankAtDevice = nullptr;  // the kernels' address of it
  dev::Channel send[kMaxPeerRingChannels];
  dev::Channel recv[kMaxPeerRingChannels];
  uint64_t sendSeq[kMaxPeerRingChannels] = {};  // messages each channel carried so far: out
  uint64_t recvSeq[kMaxPeerRingChannels] = {};  // and in
};

// At communicator init, every rank (see the top of this file). An error is a
// failed bootstrap exchange (a peer gone).
weftResult_t setUpGpuPeerRing(weftComm* comm);
// At destroy: frees the FIFOs and closes the peers' mappings, unless a
// kernel may still be running (streamsPast false): then they are left alone.
void closeGpuPeerRing(weftComm* comm, bool streamsPast);

}  // namespace weft
