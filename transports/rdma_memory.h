// Memory a NIC reaches for one-sided transfers, as the GPU ring's host proxy
// needs it (device/ring_rdma.h): the verbs transport registers FIFO
// memory, host or GPU (GPUDirect RDMA), so that a peer's NIC writes messages
// straight into its slots, and flushes the NIC's writes into GPU memory
// before a kernel reads them. Transports without one-sided writes have none
// (ChannelTable-level code asks the communicator's verbs transport for it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "weft/weft.h"

namespace weft {

// A registered region. Offsets into it are the same for every view of the
// memory: a peer writes to nicAddr + offset with rkey; local work requests
// read from nicAddr + offset with lkey. nicAddr is the NIC's name for the
// region's first byte, not necessarily a pointer the host may touch.
struct RdmaRegion {
  uint64_t nicAddr = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  bool gpu = false;
  std::string how;  // "host memory", "GPU memory through dma-buf", ... (for INFO lines)
  virtual ~RdmaRegion() = default;
};

// One-sided writes on a channel (Channel::remoteWrites): `bytes` from local
// registered memory (lkey) to the peer's (remoteAddr, rkey), ordered before
// every byte the channel sends after it, so that the receiver, once it read
// those bytes, knows the write landed. *posted false: would block (the send
// queue is full); retry later with the same arguments.
class RemoteWrites {
 public:
  virtual ~RemoteWrites() = default;
  virtual weftResult_t tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                              size_t bytes, bool* posted) = 0;
};

class RdmaMemory {
 public:
  virtual ~RdmaMemory() = default;
  // Registers [addr, addr + bytes) for local reads and remote writes and
  // reads. `gpu`: device memory of the CUDA runtime (dma-buf first, then
  // nvidia-peermem); else pinned host memory. nullptr with *why when it
  // cannot (not an error: the caller copies through host memory instead).
  virtual std::unique_ptr<RdmaRegion> registerRegion(void* addr, size_t bytes, bool gpu,
                                                     std::string* why) = 0;
  // Makes every NIC write that already completed into `region` visible to the
  // GPU before it reads the region (a PCIe read through the NIC that cannot
  // pass the posted writes: NCCL's GDR flush). Blocks until done, bounded by
  // WEFT_TIMEOUT; an error names the device and the verbs status.
  virtual weftResult_t flush(const RdmaRegion& region) = 0;
  // The NIC's name ("mlx5_0") for the GPUDirect decision (topo/gdr_pair.h).
  virtual const std::string& nicName() const = 0;
};

}  // namespace weft
