// See lazy_connection.h.
#include "transports/tcp/lazy_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "base/error.h"
#include "bootstrap/socket.h"
#include "transports/tcp/tcp_channel.h"

namespace weft {

LazyConnection::LazyConnection(Bootstrap* bs, int peer, uint32_t tag, std::atomic<int>* conn,
                               std::atomic<int>* offer, size_t spliceMin,
                               std::function<weftResult_t(int)> ready)
    : bs_(bs),
      peer_(peer),
      tag_(tag),
      lower_(bs->rank() < peer),
      name_(bs->peerName(peer)),
      conn_(conn),
      offer_(offer),
      spliceMin_(spliceMin),
      ready_(std::move(ready)) {}

LazyConnection::~LazyConnection() { stopWaiting(); }

void LazyConnection::stopWaiting() {
  if (wait_ >= 0) close(wait_);
  if (timer_ >= 0) close(timer_);
  wait_ = timer_ = -1;
}

namespace {
int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

weftResult_t LazyConnection::agree(int fd) {
  WEFT_CHECK(ready_(fd));
  out_ = std::make_unique<TcpChannel>(fd, name_, spliceMin_);
  in_ = std::make_unique<TcpChannel>(fd, name_);
  conn_->store(fd);
  stopWaiting();
  return weftSuccess;
}

// The higher rank's offer: taken once the lower rank's byte is there.
weftResult_t LazyConnection::readTaken(bool* agreed) {
  const int offer = offer_->load();
  uint8_t byte = 0;
  const ssize_t n = recv(offer, &byte, 1, MSG_DONTWAIT);
  const int err = errno;
  if (n == 1) {
    if (byte != kTaken)
      return setError(weftRemoteError,
                      "%s answered this rank's connection with byte %u, not %u: not a weft peer "
                      "of this version",
                      name_.c_str(), byte, kTaken);
    offer_->store(-1);
    WEFT_CHECK(agree(offer));
    *agreed = true;
    return weftSuccess;
  }
  if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)) return weftSuccess;
  // Ended without the byte: the lower rank's own connection came first and it
  // has since closed our offer (it left), or it is gone. Its connection, if
  // any, arrived before that end: look once more.
  int fd = -1;
  WEFT_CHECK(bs_->tryAcceptPeer(peer_, tag_, &fd));
  if (fd >= 0) {
    offer_->store(-1);
    close(offer);
    WEFT_CHECK(agree(fd));
    *agreed = true;
    return weftSuccess;
  }
  if (n == 0)
    return setError(weftRemoteError,
                    "%s closed its connection (process exited, or its communicator failed)",
                    name_.c_str());
  return setError(weftRemoteError, "connection to %s broke: %s", name_.c_str(), strerror(err));
}

weftResult_t LazyConnection::advance(bool open, bool* agreed) {
  *agreed = out_ != nullptr;
  if (*agreed) return weftSuccess;
  int fd = -1;
  WEFT_CHECK(bs_->tryAcceptPeer(peer_, tag_, &fd));
  if (fd >= 0) {
    if (lower_) {
      // The higher rank's offer, before we connected: take it.
      const uint8_t byte = kTaken;
      if (send(fd, &byte, 1, MSG_NOSIGNAL) != 1) {
        const int e = errno;
        close(fd);
        return setError(weftRemoteError, "connection from %s broke: %s", name_.c_str(),
                        strerror(e));
      }
    } else {
      // The lower rank's connection: ours, if we offered one, is dropped.
      const int offer = offer_->exchange(-1);
      if (offer >= 0) close(offer);
    }
    WEFT_CHECK(agree(fd));
    *agreed = true;
    return weftSuccess;
  }
  if (offer_->load() >= 0) return readTaken(agreed);
  if (!open) return weftSuccess;
  if (!lower_) {
    const int64_t now = monotonicNs();
    if (offerAtNs_ < 0) offerAtNs_ = now + int64_t{kOfferAfterMs} * 1000000;
    if (now < offerAtNs_) return weftSuccess;  // the lower rank's may still come
    stopWaiting();                             // the timer's set
  }
  WEFT_CHECK(bs_->connectPeer(peer_, tag_, &fd, true));
  if (lower_) {
    bs_->refuseArrivals(peer_, tag_);  // an offer on its way lost: ours is the one
    WEFT_CHECK(agree(fd));
    *agreed = true;
    return weftSuccess;
  }
  offer_->store(fd);
  return readTaken(agreed);
}

// Where the higher rank sleeps: until the lower rank's connection arrives,
// and meanwhile until it may offer (a timer) or its offer is taken (the byte,
// or the offer's end). The listener and the other, in one epoll set.
ChannelWake LazyConnection::waitWake() const {
  const int listener = bs_->arrivalFd();
  if (listener < 0) return {};  // a Hello still owed: retry
  const int offer = offer_->load();
  if (lower_ || (offer < 0 && offerAtNs_ < 0)) return {ChannelWake::Via::kFdIn, listener};
  if (wait_ < 0 && !const_cast<LazyConnection*>(this)->makeWaitSet(listener, offer)) return {};
  return {ChannelWake::Via::kFdIn, wait_};
}

bool LazyConnection::makeWaitSet(int listener, int offer) {
  int other = offer;
  if (offer < 0) {
    timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    itimerspec at{};
    at.it_value.tv_sec = static_cast<time_t>(offerAtNs_ / 1000000000);
    at.it_value.tv_nsec = static_cast<long>(offerAtNs_ % 1000000000);
    if (timer_ < 0 || timerfd_settime(timer_, TFD_TIMER_ABSTIME, &at, nullptr) != 0) {
      stopWaiting();
      return false;
    }
    other = timer_;
  }
  wait_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = other;
  bool ok = wait_ >= 0 && epoll_ctl(wait_, EPOLL_CTL_ADD, other, &ev) == 0;
  ev.events = EPOLLIN;
  ev.data.fd = listener;
  ok = ok && epoll_ctl(wait_, EPOLL_CTL_ADD, listener, &ev) == 0;
  if (!ok) stopWaiting();
  return ok;
}

Channel* LazyConnection::End::opened() const {
  if (!c_->out_) return nullptr;
  return send_ ? static_cast<Channel*>(c_->out_.get()) : c_->in_.get();
}

weftResult_t LazyConnection::End::target(bool open, Channel** out) {
  bool agreed = false;
  WEFT_CHECK(c_->advance(open, &agreed));
  *out = agreed ? opened() : nullptr;
  return weftSuccess;
}

}  // namespace weft
