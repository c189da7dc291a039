// The GPU-driven ring of one communicator: an allreduce on a CUDA stream runs
// the data-movement kernel (collectives/kernels/ring_call.h) over FIFOs in the
// ranks' own device memory, which their ring neighbours map (CUDA IPC between
// processes, the pointer itself between ranks of one process), so the data
// never leaves the GPUs and the host does nothing per chunk.
//
// Memory: each rank allocates, per channel (one per CTA), its incoming FIFO
// (slots, size words, `tail`) and the `head` counter of its outgoing channel,
// so that every wait polls local memory and every remote access is a write:
// a rank writes slots and `tail` into its next rank's memory, and `head`
// into its previous rank's.
//
// The ring is bound to the device current at communicator init (as an NCCL
// communicator is); a call with buffers on another device is refused.
//
// Per call, on the caller's stream: ready := g; wait done >= g; kernel;
// freed := g (the flags of a staging block, staging_pool.h, whose data holds
// the kernel's argument block). The progress thread, in API order with every
// other call: waits for ready, checks the call against the peers' (call
// header, as host calls do), raises done, then waits for freed: bounded by
// WEFT_TIMEOUT, and given up at once when a peer leaves, the communicator
// breaks or is aborted. Giving up raises the block's abort word, which every
// wait of the kernel polls, so the stream always moves on. Kernels of one
// communicator therefore run one at a time, in API order, on every rank,
// which is what keeps the channels' message numbers in step.
#pragma once

#include <cstdint>
#include <string>

#include "collectives/kernels/ring_call.h"
#include "core/call.h"
#include "device/device_runtime.h"

struct weftComm;

namespace weft {

struct DeviceRing {
  enum class State { kUnset, kOn, kOff };
  State state = State::kUnset;
  std::string offWhy;  // kOff: why every rank stages instead
  int device = -1;     // the GPU whose memory holds our FIFOs and runs our kernels
  int channels = 0;    // one per CTA
  void* mine = nullptr;
  void* next = nullptr;  // rank + 1's memory, mapped
  void* prev = nullptr;  // rank - 1's (the same mapping when they are one rank)
  dev::Channel send[dev::kMaxRingCtas];
  dev::Channel recv[dev::kMaxRingCtas];
  uint64_t seq[dev::kMaxRingCtas] = {};  // messages each channel carried so far
};

// At communicator init (every rank, through the bootstrap): sets the ring up
// on the current CUDA device, or turns it off on every rank when any rank
// cannot take part: its runtime has no ring kernel or the process had not
// loaded CUDA (as with NCCL, select the GPU before creating the
// communicator), ranks on several nodes, separate processes on one GPU,
// memory that cannot be mapped, WEFT_GPU_RING=0 anywhere. An error is a
// failed bootstrap exchange (a peer gone).
weftResult_t setUpDeviceRing(weftComm* comm);
// Whether `call` (validated, on a stream, alone: not in a group) runs on the
// ring: an allreduce (sum, prod, max, min) of at least one element.
bool useDeviceRing(weftComm* comm, const Call& call);
// Enqueues `call` as a ring kernel on its stream and queues its watch to the
// progress thread. On failure nothing of the call runs on this rank.
weftResult_t enqueueRingCall(weftComm* comm, const Call& call);
// At destroy: frees the FIFOs and closes the peers' mappings, unless a
// kernel may still be running (streamsPast false): then they are left alone.
void closeDeviceRing(weftComm* comm, bool streamsPast);

}  // namespace weft
