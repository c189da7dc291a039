// See ib_connection.h for the protocol and its accounting.
#include "transports/ib/ib_connection.h"

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "base/config.h"
#include "base/error.h"
#include "bootstrap/socket.h"
#include "transports/ib/ib_qp_states.h"

namespace weft {
namespace {

constexpr uint32_t kSignalEvery = 16;
constexpr uint64_t kTrackedWr = 1ull << 32;  // wr_id bit: a DATA write's completion
constexpr size_t kMaxMessage = 512 << 10;    // one WRITE at most; keeps the pipeline fed

void* mapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

IbConnection::IbConnection(IbDevice* dev, std::string peer, size_t ringBytes, int deathFd,
                           RegCache* cache, size_t zcopyMin)
    : dev_(dev),
      peer_(std::move(peer)),
      ringBytes_(ringBytes),
      deathFd_(deathFd),
      cache_(cache),
      zcMin_(zcopyMin) {}

IbConnection::~IbConnection() {
  if (cmId_ != nullptr) {
    // Tells the peer (a DREQ; it fails harmlessly on an id that never
    // connected) and moves the QP to error, then frees QP and id. The id's
    // events were all acknowledged as they came, so rdma_destroy_id() does not wait.
    rdma_disconnect(cmId_);
    rdma_destroy_qp(cmId_);
    rdma_destroy_id(cmId_);
  } else if (qp_ != nullptr) {
    ibv_destroy_qp(qp_);
  }
  if (sendCq_ != nullptr) ibv_destroy_cq(sendCq_);
  if (recvCq_ != nullptr) ibv_destroy_cq(recvCq_);
  for (ibv_mr* mr : {ringMr_, stagingMr_, wordsMr_, bounceMr_})
    if (mr != nullptr) ibv_dereg_mr(mr);
  for (const RegCache::Entry* e : {sendEntry_, recvEntry_})
    if (e != nullptr) cache_->release(e);
  if (bounce_ != nullptr) munmap(bounce_, kMaxCts);
  if (ring_ != nullptr) munmap(ring_, ringBytes_);
  if (staging_ != nullptr) munmap(staging_, ringBytes_);
  if (words_ != nullptr) munmap(words_, 4096);
}

weftResult_t IbConnection::createBuffers(IbEndpoint* local) {
  ring_ = static_cast<unsigned char*>(mapZeroed(ringBytes_));
  staging_ = static_cast<unsigned char*>(mapZeroed(ringBytes_));
  words_ = static_cast<uint64_t*>(mapZeroed(4096));
  if (ring_ == nullptr || staging_ == nullptr || words_ == nullptr)
    return setError(weftSystemError, "verbs buffers for %s: %s", peer_.c_str(), strerror(errno));
  ringMr_ =
      ibv_reg_mr(dev_->pd(), ring_, ringBytes_, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  stagingMr_ = ibv_reg_mr(dev_->pd(), staging_, ringBytes_, IBV_ACCESS_LOCAL_WRITE);
  wordsMr_ = ibv_reg_mr(dev_->pd(), words_, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (ringMr_ == nullptr || stagingMr_ == nullptr || wordsMr_ == nullptr)
    return setError(weftSystemError, "%s: ibv_reg_mr for %s failed: %s", dev_->name().c_str(),
                    peer_.c_str(), strerror(errno));
  sendCq_ = ibv_create_cq(dev_->context(), static_cast<int>(sqDepth_), nullptr, nullptr, 0);
  recvCq_ = ibv_create_cq(dev_->context(), static_cast<int>(rqDepth_), nullptr, nullptr, 0);
  if (sendCq_ == nullptr || recvCq_ == nullptr)
    return setError(weftSystemError, "%s: ibv_create_cq failed: %s", dev_->name().c_str(),
                    strerror(errno));
  *local = IbEndpoint{};
  std::memcpy(local->gid, dev_->gid().raw, 16);
  local->lid = dev_->lid();
  local->ringAddr = reinterpret_cast<uint64_t>(ring_);
  local->ringRkey = ringMr_->rkey;
  local->ringBytes = ringBytes_;
  local->creditAddr = reinterpret_cast<uint64_t>(&words_[0]);
  local->creditRkey = wordsMr_->rkey;
  local->mtu = dev_->mtu();
  return weftSuccess;
}

ibv_qp_init_attr IbConnection::qpInitAttr(uint32_t inlineBytes) {
  ibv_qp_init_attr init{};
  init.send_cq = sendCq_;
  init.recv_cq = recvCq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = sqDepth_;
  init.cap.max_recv_wr = rqDepth_;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = inlineBytes;
  return init;
}

// Receives carry no data (the WRITEs place it); they only catch the immediates.
weftResult_t IbConnection::postInitialRecvs() {
  for (uint32_t i = 0; i < rqDepth_; ++i) {
    ibv_recv_wr wr{}, *bad = nullptr;
    if (ibv_post_recv(qp_, &wr, &bad) != 0)
      return setError(weftSystemError, "%s: ibv_post_recv failed: %s", dev_->name().c_str(),
                      strerror(errno));
  }
  return weftSuccess;
}

weftResult_t IbConnection::adoptCmQp(rdma_cm_id* id, uint32_t maxInline) {
  cmId_ = id;
  qp_ = id->qp;
  maxInline_ = maxInline;
  return postInitialRecvs();
}

weftResult_t IbConnection::create(IbEndpoint* local) {
  WEFT_CHECK(createBuffers(local));
  for (uint32_t inl : {64u, 0u}) {  // inline sends where the device offers them
    ibv_qp_init_attr init = qpInitAttr(inl);
    qp_ = ibv_create_qp(dev_->pd(), &init);
    if (qp_ != nullptr) {
      maxInline_ = init.cap.max_inline_data;
      break;
    }
  }
  if (qp_ == nullptr)
    return setError(weftSystemError, "%s: ibv_create_qp for %s failed: %s", dev_->name().c_str(),
                    peer_.c_str(), strerror(errno));
  WEFT_CHECK(qpToInit(*dev_, qp_, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE,
                      "the QP for " + peer_));
  WEFT_CHECK(postInitialRecvs());
  std::random_device rd;
  sendPsn_ = rd() & 0xFFFFFF;
  local->qpn = qp_->qp_num;
  local->psn = sendPsn_;
  return weftSuccess;
}

weftResult_t IbConnection::setRemote(const IbEndpoint& remote) {
  remote_ = remote;
  if (remote.ringBytes != ringBytes_)
    return setError(weftInvalidUsage,
                    "%s uses %llu-byte verbs rings, we use %zu (WEFT_IB_BUFFER "
                    "must match on every rank)",
                    peer_.c_str(), static_cast<unsigned long long>(remote.ringBytes), ringBytes_);
  return weftSuccess;
}

weftResult_t IbConnection::connect(const IbEndpoint& remote) {
  WEFT_CHECK(setRemote(remote));
  const std::string who = "the QP for " + peer_;
  WEFT_CHECK(qpToRtr(*dev_, qp_, remote.qpn, remote.psn, remote.gid, remote.lid,
                     static_cast<ibv_mtu>(std::min<uint32_t>(remote.mtu, dev_->mtu())), who));
  return qpToRts(*dev_, qp_, sendPsn_, who);
}

weftResult_t IbConnection::completionError(const ibv_wc& wc, const char* what) {
  return setError(weftRemoteError, "verbs %s with %s on %s failed: %s (status %d, vendor 0x%x)",
                  what, peer_.c_str(), dev_->name().c_str(), ibv_wc_status_str(wc.status),
                  static_cast<int>(wc.status), wc.vendor_err);
}

weftResult_t IbConnection::postWrite(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr,
                                     uint32_t rkey, size_t bytes, int64_t imm, bool inlineData,
                                     bool track) {
  ibv_sge sge{localAddr, static_cast<uint32_t>(bytes), lkey};
  ibv_send_wr wr{}, *bad = nullptr;
  wr.sg_list = &sge;
  wr.num_sge = bytes > 0 ? 1 : 0;
  wr.opcode = imm >= 0 ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  if (imm >= 0) wr.imm_data = htonl(ibimm::withSeq(static_cast<uint32_t>(imm), immSent_));
  wr.wr.rdma.remote_addr = remoteAddr;
  wr.wr.rdma.rkey = rkey;
  ++unsignaled_;
  if (track || unsignaled_ >= kSignalEvery || sqUsed_ + 1 >= sqDepth_) {
    wr.send_flags |= IBV_SEND_SIGNALED;
    wr.wr_id = unsignaled_ | (track ? kTrackedWr : 0);  // the work requests it retires
    unsignaled_ = 0;
  }
  if (inlineData) wr.send_flags |= IBV_SEND_INLINE;
  const int rc = ibv_post_send(qp_, &wr, &bad);  // returns the error, not errno
  if (rc != 0)
    return setError(weftRemoteError, "verbs post to %s on %s failed: %s (QP in error?)",
                    peer_.c_str(), dev_->name().c_str(), strerror(rc));
  ++sqUsed_;
  if (imm >= 0) ++immSent_;
  return weftSuccess;
}

weftResult_t IbConnection::reapSends() {
  ibv_wc wc[16];
  int n = ibv_poll_cq(sendCq_, 16, wc);
  if (n < 0)
    return setError(weftRemoteError, "polling the send queue for %s failed", peer_.c_str());
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return completionError(wc[i], "write");
    sqUsed_ -= static_cast<uint32_t>(wc[i].wr_id);
    if ((wc[i].wr_id & kTrackedWr) != 0) inflightDone_ = true;
  }
  return weftSuccess;
}

weftResult_t IbConnection::reapRecvs() {
  ibv_wc wc[32];
  int n = ibv_poll_cq(recvCq_, 32, wc);
  if (n < 0)
    return setError(weftRemoteError, "polling the receive queue for %s failed", peer_.c_str());
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return completionError(wc[i], "receive");
    const uint32_t imm = ntohl(wc[i].imm_data);
    const uint64_t n = ibimm::count(imm);
    if (ibimm::seq(imm) != (immSeen_ & ibimm::kSeqMask))
      return setError(weftRemoteError,
                      "verbs: message %llu from %s arrived out of sequence (it carries %u, "
                      "expected %llu): the RDMA provider lost or repeated a completion",
                      static_cast<unsigned long long>(immSeen_), peer_.c_str(), ibimm::seq(imm),
                      static_cast<unsigned long long>(immSeen_ & ibimm::kSeqMask));
    ++immSeen_;
    switch (ibimm::kind(imm)) {
      case ibimm::kRing:  // more stream bytes in the ring
        if (!segs_.empty() && !segs_.back().zcopy)
          segs_.back().bytes += n;
        else
          segs_.push_back({false, n});
        break;
      case ibimm::kRts:  // the next n stream bytes come zero-copy
        segs_.push_back({true, n});
        break;
      case ibimm::kCts:  // the completion orders the slot's bytes before this read
        ctsAddr_ = __atomic_load_n(&words_[4], __ATOMIC_ACQUIRE);
        ctsRkey_ = static_cast<uint32_t>(__atomic_load_n(&words_[5], __ATOMIC_ACQUIRE));
        ctsLen_ = static_cast<uint32_t>(__atomic_load_n(&words_[5], __ATOMIC_ACQUIRE) >> 32);
        ctsUsed_ = 0;
        ctsValid_ = ctsLen_ == n;
        if (!ctsValid_)
          return setError(weftRemoteError, "verbs: %s sent a malformed zero-copy CTS (%u != %llu)",
                          peer_.c_str(), ctsLen_, static_cast<unsigned long long>(n));
        break;
      case ibimm::kData:  // n bytes landed in the buffer our CTS advertised
        zcArrived_ += n;
        break;
    }
    ibv_recv_wr wr{}, *bad = nullptr;
    if (ibv_post_recv(qp_, &wr, &bad) != 0)
      return setError(weftRemoteError, "re-posting a receive for %s failed: %s", peer_.c_str(),
                      strerror(errno));
  }
  return weftSuccess;
}

// Credits go back once a quarter of the ring is consumed (or everything, when
// the sender may be waiting on the last bytes of a message).
weftResult_t IbConnection::returnCredit(bool force) {
  const uint64_t pending = consumed_ - creditSent_;
  if (pending == 0 || (!force && pending < ringBytes_ / 4)) return weftSuccess;
  if (sqUsed_ + 1 >= sqDepth_) WEFT_CHECK(reapSends());
  if (sqUsed_ + 1 >= sqDepth_) return weftSuccess;  // next time
  words_[1] = consumed_;
  creditSent_ = consumed_;
  return postWrite(reinterpret_cast<uint64_t>(&words_[1]), wordsMr_->lkey, remote_.creditAddr,
                   remote_.creditRkey, sizeof(uint64_t), -1, maxInline_ >= sizeof(uint64_t));
}

// A receiver that only waits learns of a dead peer from its TCP socket (EOF),
// checked every few thousand idle polls.
weftResult_t IbConnection::checkPeerAlive() {
  if (++idlePolls_ < 4096 || deathFd_ < 0) return weftSuccess;
  idlePolls_ = 0;
  if (peerSocketClosed(deathFd_))
    return setError(weftRemoteError, "%s closed its connection (process exited?)", peer_.c_str());
  return weftSuccess;
}

weftResult_t IbConnection::remember(weftResult_t r) {
  if (r != weftSuccess && failed_ == weftSuccess) {
    failed_ = r;
    failure_ = lastError();
  }
  return r;
}

weftResult_t IbConnection::trySend(const void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  if (failed_ != weftSuccess) return setError(failed_, "%s", failure_.c_str());
  return remember(sendOnce(data, bytes, moved));
}

weftResult_t IbConnection::tryRecv(void* data, size_t bytes, size_t* moved) {
  *moved = 0;
  if (failed_ != weftSuccess) return setError(failed_, "%s", failure_.c_str());
  return remember(recvOnce(data, bytes, moved));
}

weftResult_t IbConnection::tryPeek(void* data, size_t bytes, size_t* got) {
  *got = 0;
  if (failed_ != weftSuccess) return setError(failed_, "%s", failure_.c_str());
  if (segs_.empty()) WEFT_CHECK(remember(reapRecvs()));
  if (segs_.empty()) return remember(checkPeerAlive());
  // Each ring segment is one WRITE, which never wraps the ring (sendOnce).
  uint64_t at = consumed_;
  for (const Segment& seg : segs_) {
    if (*got == bytes) break;
    if (seg.zcopy)
      return setError(weftInvalidUsage,
                      "%s's next send is zero-copy (WEFT_IB_ZCOPY_THRESHOLD), whose bytes cannot "
                      "be looked at before they are received",
                      peer_.c_str());
    const size_t n = std::min(bytes - *got, static_cast<size_t>(seg.bytes));
    std::memcpy(static_cast<char*>(data) + *got, ring_ + at % ringBytes_, n);
    *got += n;
    at += n;
  }
  return weftSuccess;
}

weftResult_t IbConnection::tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr,
                                  uint32_t rkey, size_t bytes, bool* posted) {
  *posted = false;
  if (failed_ != weftSuccess) return setError(failed_, "%s", failure_.c_str());
  WEFT_CHECK(remember(reapSends()));
  if (sqUsed_ + 2 >= sqDepth_) return remember(checkPeerAlive());  // room for what follows
  WEFT_CHECK(remember(postWrite(localAddr, lkey, remoteAddr, rkey, bytes, -1, false)));
  *posted = true;
  idlePolls_ = 0;
  return weftSuccess;
}

weftResult_t IbConnection::sendOnce(const void* data, size_t bytes, size_t* moved) {
  WEFT_CHECK(reapSends());
  if (zcLeft_ == 0 && zcMin_ > 0 && bytes >= zcMin_) WEFT_CHECK(startZeroCopy(data, bytes));
  if (zcLeft_ > 0) return sendZeroCopy(data, bytes, moved);
  const uint64_t credit = __atomic_load_n(&words_[0], __ATOMIC_ACQUIRE);
  const size_t offset = sent_ % ringBytes_;
  size_t n = std::min(
      {bytes, ringBytes_ - static_cast<size_t>(sent_ - credit), ringBytes_ - offset, kMaxMessage});
  if (n == 0 || sqUsed_ + 2 >= sqDepth_) return checkPeerAlive();
  const bool inl = n <= maxInline_;
  uint64_t local = reinterpret_cast<uint64_t>(data);
  if (!inl) {
    std::memcpy(staging_ + offset, data, n);
    local = reinterpret_cast<uint64_t>(staging_ + offset);
  }
  WEFT_CHECK(postWrite(local, stagingMr_->lkey, remote_.ringAddr + offset, remote_.ringRkey, n,
                       ibimm::make(ibimm::kRing, n), inl));
  sent_ += n;
  *moved = n;
  idlePolls_ = 0;
  return weftSuccess;
}

weftResult_t IbConnection::recvOnce(void* data, size_t bytes, size_t* moved) {
  if (segs_.empty()) WEFT_CHECK(reapRecvs());
  if (segs_.empty()) {
    WEFT_CHECK(returnCredit(true));
    return checkPeerAlive();
  }
  if (segs_.front().zcopy) return recvZeroCopy(data, bytes, moved);
  Segment& seg = segs_.front();
  const size_t offset = consumed_ % ringBytes_;
  const size_t n = std::min({bytes, static_cast<size_t>(seg.bytes), ringBytes_ - offset});
  std::memcpy(data, ring_ + offset, n);
  consumed_ += n;
  seg.bytes -= n;
  if (seg.bytes == 0) segs_.pop_front();
  *moved = n;
  idlePolls_ = 0;
  // A sender waiting on the last bytes of a message, or moving on to a
  // zero-copy one, gets all its credit back now.
  return returnCredit(segs_.empty() || segs_.front().zcopy);
}

}  // namespace weft
