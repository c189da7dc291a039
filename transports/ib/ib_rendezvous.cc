// The zero-copy rendezvous of an IbConnection (protocol in ib_connection.h):
// RTS from the sender, CTS from the receiver naming the caller's registered
// buffer, DATA written straight from the sender's registered buffer into it.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "transports/ib/ib_connection.h"

namespace weft {
namespace {

bool covers(const RegCache::Entry* e, const void* data, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(data);
  return e != nullptr && a >= e->start && a + bytes <= e->start + e->bytes;
}

}  // namespace

// Room for one more work request (plus one for a credit return).
weftResult_t IbConnection::sqRoom() {
  if (sqUsed_ + 2 >= sqDepth_) WEFT_CHECK(reapSends());
  return weftSuccess;
}

// Announces the next min(bytes, 1 GiB) stream bytes as zero-copy, if the
// buffer registers; otherwise leaves zcLeft_ at 0 and the bytes go through the
// ring as usual.
weftResult_t IbConnection::startZeroCopy(const void* data, size_t bytes) {
  if (sqUsed_ + 2 >= sqDepth_) return weftSuccess;  // decide again on the next call
  const size_t n = std::min<size_t>(bytes, ibimm::kMaxCount);
  const RegCache::Entry* e = cache_->acquire(data, n);
  if (e == nullptr) return weftSuccess;
  sendEntry_ = e;
  zcLeft_ = n;
  ctsValid_ = false;
  return postWrite(0, 0, remote_.ringAddr, remote_.ringRkey, 0, ibimm::make(ibimm::kRts, n), false);
}

weftResult_t IbConnection::sendZeroCopy(const void* data, size_t bytes, size_t* moved) {
  if (inflightBytes_ > 0) {
    if (!inflightDone_) return checkPeerAlive();
    // The HCA has read the bytes: they count as moved only now.
    if (data != inflightSrc_)
      return setError(weftInternalError,
                      "verbs zero-copy send to %s retried with another buffer (%p, not %p)",
                      peer_.c_str(), data, static_cast<const void*>(inflightSrc_));
    *moved = inflightBytes_;
    zcLeft_ -= inflightBytes_;
    zcBytes_ += inflightBytes_;
    ++zcWrites_;
    inflightBytes_ = 0;
    inflightDone_ = false;
    if (zcLeft_ == 0) {
      cache_->release(sendEntry_);
      sendEntry_ = nullptr;
    }
    idlePolls_ = 0;
    return weftSuccess;
  }
  if (!ctsValid_) WEFT_CHECK(reapRecvs());
  if (!ctsValid_) return checkPeerAlive();
  const size_t n = std::min<size_t>({bytes, zcLeft_, ctsLen_ - ctsUsed_});
  if (!covers(sendEntry_, data, n))
    return setError(weftInternalError,
                    "verbs zero-copy send to %s continued outside the buffer it announced",
                    peer_.c_str());
  WEFT_CHECK(sqRoom());
  if (sqUsed_ + 2 >= sqDepth_) return checkPeerAlive();
  const ibv_mr* mr = static_cast<const ibv_mr*>(sendEntry_->handle);
  WEFT_CHECK(postWrite(reinterpret_cast<uint64_t>(data), mr->lkey, ctsAddr_ + ctsUsed_, ctsRkey_, n,
                       ibimm::make(ibimm::kData, n), false, true));
  // The CTS is used up as the write is posted: the receiver may send the next
  // one as soon as these bytes land, before we see our write's completion.
  ctsUsed_ += n;
  if (ctsUsed_ == ctsLen_) ctsValid_ = false;
  inflightSrc_ = static_cast<const char*>(data);
  inflightBytes_ = n;
  idlePolls_ = 0;
  return weftSuccess;
}

// Offers the caller's buffer (or the bounce buffer) for the next bytes of the
// RTS at the front of the stream.
weftResult_t IbConnection::postCts(void* data, size_t bytes) {
  const size_t n = std::min<size_t>({bytes, segs_.front().bytes, kMaxCts});
  uint64_t addr = reinterpret_cast<uint64_t>(data);
  uint32_t rkey = 0;
  recvEntry_ = cache_->acquire(data, n);
  if (recvEntry_ != nullptr) {
    rkey = static_cast<const ibv_mr*>(recvEntry_->handle)->rkey;
  } else {  // not registrable (locked-memory limit?): land in the bounce buffer, copy out
    if (bounce_ == nullptr) {
      void* p = mmap(nullptr, kMaxCts, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        return setError(weftSystemError, "verbs bounce buffer for %s: %s", peer_.c_str(),
                        strerror(errno));
      bounce_ = static_cast<unsigned char*>(p);
      bounceMr_ = ibv_reg_mr(dev_->pd(), bounce_, kMaxCts,
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
      if (bounceMr_ == nullptr)
        return setError(weftSystemError, "%s: ibv_reg_mr of a bounce buffer for %s failed: %s",
                        dev_->name().c_str(), peer_.c_str(), strerror(errno));
    }
    addr = reinterpret_cast<uint64_t>(bounce_);
    rkey = bounceMr_->rkey;
    ctsBounce_ = true;
  }
  // words_[2..3] stay untouched until the DATA they ask for arrives, which
  // implies the peer had received them: safe to post without inline.
  words_[2] = addr;
  words_[3] = rkey | static_cast<uint64_t>(n) << 32;
  ctsLeft_ = n;
  ctsDone_ = 0;
  ctsDst_ = static_cast<char*>(data);
  return postWrite(reinterpret_cast<uint64_t>(&words_[2]), wordsMr_->lkey,
                   remote_.creditAddr + 4 * sizeof(uint64_t), remote_.creditRkey,
                   2 * sizeof(uint64_t), ibimm::make(ibimm::kCts, n), maxInline_ >= 16);
}

weftResult_t IbConnection::recvZeroCopy(void* data, size_t bytes, size_t* moved) {
  if (ctsLeft_ == 0) {
    WEFT_CHECK(sqRoom());
    if (sqUsed_ + 2 >= sqDepth_) return checkPeerAlive();
    WEFT_CHECK(postCts(data, bytes));
    idlePolls_ = 0;
    return weftSuccess;
  }
  if (zcArrived_ == 0) WEFT_CHECK(reapRecvs());
  if (zcArrived_ == 0) return checkPeerAlive();
  const uint64_t k = zcArrived_;
  if (k > ctsLeft_ || k > bytes)
    return setError(weftInternalError,
                    "verbs zero-copy receive from %s: %llu bytes arrived, %llu expected",
                    peer_.c_str(), static_cast<unsigned long long>(k),
                    static_cast<unsigned long long>(std::min<uint64_t>(ctsLeft_, bytes)));
  if (ctsBounce_)
    std::memcpy(data, bounce_ + ctsDone_, k);
  else if (static_cast<char*>(data) != ctsDst_ + ctsDone_)
    return setError(weftInternalError,
                    "verbs zero-copy receive from %s retried with another buffer", peer_.c_str());
  ctsDone_ += k;
  ctsLeft_ -= k;
  zcArrived_ = 0;
  segs_.front().bytes -= k;
  if (segs_.front().bytes == 0) segs_.pop_front();
  if (ctsLeft_ == 0) {
    if (recvEntry_ != nullptr) cache_->release(recvEntry_);
    recvEntry_ = nullptr;
    ctsBounce_ = false;
  }
  *moved = k;
  idlePolls_ = 0;
  return weftSuccess;
}

}  // namespace weft
