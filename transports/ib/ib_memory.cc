// Registering FIFO memory for the NIC, and the GDR flush (ib_memory.h).
#include "transports/ib/ib_memory.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "base/config.h"
#include "base/device_runtime.h"
#include "base/error.h"
#include "base/wait.h"
#include "transports/ib/ib_qp_states.h"

namespace weft {
namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct IbRegion : RdmaRegion {
  ibv_mr* mr = nullptr;
  ~IbRegion() override {
    if (mr != nullptr) ibv_dereg_mr(mr);
  }
};

std::unique_ptr<RdmaRegion> made(ibv_mr* mr, uint64_t nicAddr, bool gpu, const std::string& how) {
  auto r = std::make_unique<IbRegion>();
  r->mr = mr;
  r->nicAddr = nicAddr;
  r->lkey = mr->lkey;
  r->rkey = mr->rkey;
  r->gpu = gpu;
  r->how = how;
  return r;
}

}  // namespace

IbMemory::~IbMemory() {
  if (qp_ != nullptr) ibv_destroy_qp(qp_);
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
  if (sinkMr_ != nullptr) ibv_dereg_mr(sinkMr_);
  delete sink_;
}

std::unique_ptr<RdmaRegion> IbMemory::registerRegion(void* addr, size_t bytes, bool gpu,
                                                     std::string* why) {
  if (!gpu) {
    ibv_mr* mr = ibv_reg_mr(dev_->pd(), addr, bytes, kAccess);
    if (mr != nullptr) return made(mr, reinterpret_cast<uintptr_t>(addr), false, "host memory");
    *why = std::string("ibv_reg_mr of pinned host memory failed: ") + strerror(errno);
    return nullptr;
  }
  const NicAccess access = deviceRuntime()->nicAccess(addr, bytes);
  std::string tried;
  if (access.dmabufFd >= 0) {
    // The iova is the device address, so the region's NIC addresses match
    // the kernel's pointers (offsets are what matter either way).
    ibv_mr* mr = ibv_reg_dmabuf_mr(dev_->pd(), access.dmabufOffset, bytes,
                                   reinterpret_cast<uintptr_t>(addr), access.dmabufFd, kAccess);
    const int err = errno;
    close(access.dmabufFd);
    if (mr != nullptr)
      return made(mr, reinterpret_cast<uintptr_t>(addr), true, "GPU memory through dma-buf");
    tried = std::string("ibv_reg_dmabuf_mr failed: ") + strerror(err) + "; ";
  }
  if (access.address != nullptr) {
    ibv_mr* mr = ibv_reg_mr(dev_->pd(), access.address, bytes, kAccess);
    if (mr != nullptr)
      return made(mr, reinterpret_cast<uintptr_t>(access.address), true,
                  "GPU memory through its address (" + access.addressVia +
                      (tried.empty() ? "" : "; " + tried.substr(0, tried.size() - 2)) + ")");
    tried += std::string("ibv_reg_mr of the GPU address failed: ") + strerror(errno);
  } else {
    tried += access.why;
  }
  *why = tried;
  return nullptr;
}

weftResult_t IbMemory::makeFlushQp() {
  sink_ = new uint64_t(0);
  sinkMr_ = ibv_reg_mr(dev_->pd(), sink_, sizeof(*sink_), IBV_ACCESS_LOCAL_WRITE);
  cq_ = ibv_create_cq(dev_->context(), 4, nullptr, nullptr, 0);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 2;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  if (sinkMr_ != nullptr && cq_ != nullptr) qp_ = ibv_create_qp(dev_->pd(), &init);
  if (qp_ == nullptr)
    return setError(weftSystemError, "%s: the GDR flush queue pair could not be made: %s",
                    dev_->name().c_str(), strerror(errno));
  // INIT, then RTR and RTS towards itself: every read goes out and back
  // through the NIC.
  const uint32_t psn = std::random_device()() & 0xFFFFFF;
  const std::string who = "the GDR flush QP";
  WEFT_CHECK(qpToInit(*dev_, qp_, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE, who));
  WEFT_CHECK(qpToRtr(*dev_, qp_, qp_->qp_num, psn, dev_->gid().raw, dev_->lid(), dev_->mtu(), who));
  return qpToRts(*dev_, qp_, psn, who);
}

weftResult_t IbMemory::flush(const RdmaRegion& region) {
  if (qp_ == nullptr) WEFT_CHECK(makeFlushQp());
  ibv_sge sge{reinterpret_cast<uintptr_t>(sink_), sizeof(*sink_), sinkMr_->lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = ++flushes_;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = region.nicAddr;
  wr.wr.rdma.rkey = region.rkey;
  const int rc = ibv_post_send(qp_, &wr, &bad);
  if (rc != 0)
    return setError(weftSystemError, "%s: posting the GDR flush read failed: %s",
                    dev_->name().c_str(), strerror(rc));
  const Deadline deadline = Deadline::after(timeoutSec_);
  for (int polls = 0;; ++polls) {
    ibv_wc wc{};
    const int n = ibv_poll_cq(cq_, 1, &wc);
    if (n < 0)
      return setError(weftSystemError, "%s: polling the GDR flush failed", dev_->name().c_str());
    if (n == 1) {
      if (wc.status != IBV_WC_SUCCESS)
        return setError(weftSystemError, "%s: the GDR flush read failed: %s (vendor error %u)",
                        dev_->name().c_str(), ibv_wc_status_str(wc.status), wc.vendor_err);
      return weftSuccess;
    }
    if (polls > 64) sched_yield();  // a software NIC needs this core
    if ((polls & 1023) == 0 && deadline.expired())
      return setError(weftTimeout, "%s: the GDR flush read did not complete within %.0f s",
                      dev_->name().c_str(), timeoutSec_);
  }
}

}  // namespace weft
