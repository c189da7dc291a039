// The CUDA executor's GPU ring: an allreduce, allgather, reduce-scatter,
// broadcast or reduce on a CUDA stream runs the data-movement kernel
// (collectives/kernels/ring_call.h) over the channels of the GPU peer ring
// (device/gpu_peer_ring.h), which live in the ranks' own GPU memory (or,
// between nodes, in pinned host FIFOs that the host proxy carries), so the
// host does nothing per chunk within a node.
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

#include "core/call.h"

struct weftComm;

namespace weft {

// CTAs of a ring kernel whose links each carry `linkBytes` (an allreduce's
// buffer; n blocks for allgather and reduce-scatter): one per 256 KiB, at
// most the ring's channels (WEFT_MAX_CTAS); 0 when the ring is off or the
// call is empty. What the launch uses, and what weftCommGpuCtas reports.
int ringCtasFor(const weftComm* comm, uint64_t linkBytes);
// Enqueues `call` (the selection table's GPU-ring row chose it:
// core/algo_table.h) as a ring kernel on its stream and queues its watch to the
// progress thread (before the launch: see device_ring_call.cc). A call with
// buffers on another device than the ring's is refused. On a failure before
// the launch nothing of the call runs on this rank; after it, the watch fails
// the call (the caller breaks the communicator either way).
weftResult_t enqueueRingCall(weftComm* comm, const Call& call);

}  // namespace weft
