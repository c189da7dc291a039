// The verbs side of RdmaMemory (transports/rdma_memory.h): FIFO memory the
// NIC writes into directly, host or GPU, and the GDR flush.
//
// GPU memory registers, in this order:
//   1. ibv_reg_dmabuf_mr on a dma-buf the CUDA runtime exports for the range
//      (upstream kernels, no extra module);
//   2. ibv_reg_mr on the device address itself, which only works where the
//      nvidia-peermem module lets the verbs core pin GPU pages.
// Neither: no region, and the caller keeps its FIFO in pinned host memory.
//
// The flush: a NIC's completed write into GPU memory may still sit in the PCIe
// fabric when the host learns of it, so a kernel told "the data is there" could
// read stale bytes. A read of the same memory through the NIC (an RDMA READ on
// a queue pair connected to itself) returns only after every write posted
// before it on that path, as PCIe forbids a read completion from passing
// posted writes. One small read per batch of landed messages is enough.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "transports/ib/ib_device.h"
#include "transports/rdma_memory.h"

namespace weft {

class IbMemory : public RdmaMemory {
 public:
  IbMemory(IbDevice* dev, double timeoutSec) : dev_(dev), timeoutSec_(timeoutSec) {}
  ~IbMemory() override;
  IbMemory(const IbMemory&) = delete;
  IbMemory& operator=(const IbMemory&) = delete;

  std::unique_ptr<RdmaRegion> registerRegion(void* addr, size_t bytes, bool gpu,
                                             std::string* why) override;
  weftResult_t flush(const RdmaRegion& region) override;
  const std::string& nicName() const override { return dev_->name(); }

 private:
  // The loopback queue pair, made on the first flush.
  weftResult_t makeFlushQp();

  IbDevice* dev_;
  double timeoutSec_;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  uint64_t* sink_ = nullptr;  // where the flush reads land
  ibv_mr* sinkMr_ = nullptr;
  uint64_t flushes_ = 0;
};

}  // namespace weft
