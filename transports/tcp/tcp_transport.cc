// TCP transport: mesh setup and the non-blocking channel operations.
#include "transports/tcp/tcp_transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/fork_close.h"
#include "base/log.h"
#include "transports/striped_channel.h"
#include "transports/tcp/tcp_congestion.h"

namespace weft {

TcpTransport::~TcpTransport() {
  const int perPeer = nstreams_ * ways_;
  lazy_.clear();  // before the sockets they name
  for (auto& per : fds_)
    for (int i = 0; per && i < perPeer; ++i) {
      int fd = per[i].exchange(-1);
      keepInForkedChildren(fd);  // before the close: the number may be reused
      closeFd(&fd);
    }
  for (auto& per : offers_)
    for (int s = 0; per && s < nstreams_; ++s) {
      int fd = per[s].exchange(-1);
      keepInForkedChildren(fd);
      closeFd(&fd);
    }
}

void TcpTransport::shutdownAll() {
  const int perPeer = nstreams_ * ways_;
  for (auto& per : fds_)
    for (int i = 0; per && i < perPeer; ++i) {
      const int fd = per[i].load();
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
    }
  for (auto& per : offers_)
    for (int s = 0; per && s < nstreams_; ++s) {
      const int fd = per[s].load();
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
    }
}

int TcpTransport::openConnections() const {
  int open = 0;
  const int perPeer = nstreams_ * ways_;
  for (const auto& per : fds_)
    for (int i = 0; per && i < perPeer; ++i) open += per[i].load() >= 0;
  for (const auto& per : offers_)
    for (int s = 0; per && s < nstreams_; ++s) open += per[s].load() >= 0;
  return open;
}

namespace {

// A peer's bulk channel whose lanes could not be opened: every move fails
// with the reason, as a broken connection's would.
class FailedChannel : public Channel {
 public:
  FailedChannel(std::string peer, std::string why) : peer_(std::move(peer)), why_(std::move(why)) {}
  weftResult_t trySend(const void*, size_t, size_t* moved) override { return fail(moved); }
  weftResult_t tryRecv(void*, size_t, size_t* moved) override { return fail(moved); }
  weftResult_t tryPeek(void*, size_t, size_t* got) override { return fail(got); }
  weftResult_t prepare() override {
    size_t unused = 0;
    return fail(&unused);
  }
  ChannelWake wake() const override { return {ChannelWake::Via::kRetry, -1}; }
  const std::string& peerName() const override { return peer_; }

 private:
  weftResult_t fail(size_t* moved) const {
    *moved = 0;
    return setError(weftRemoteError, "%s", why_.c_str());
  }
  std::string peer_, why_;
};

}  // namespace

Channel* TcpTransport::LaneStandIn::lane() const {
  const Stream& st = t_->streams_[peer_][stream_];
  return dir_ == 0 ? st.send[way_] : st.recv[way_];
}

weftResult_t TcpTransport::LaneStandIn::target(bool, Channel** out) {
  *out = t_->lanesDone_[peer_] || t_->advanceLanes(peer_) ? lane() : nullptr;
  return weftSuccess;
}

Channel* TcpTransport::LaneStandIn::opened() const {
  return t_->lanesDone_[peer_] ? lane() : nullptr;
}

// The higher rank sleeps on the listener until the lanes arrive (the lower
// rank's stand-in is ready after prepare: its connects complete at once).
ChannelWake TcpTransport::LaneStandIn::waitWake() const {
  const int fd = t_->bs_->arrivalFd();
  return fd >= 0 ? ChannelWake{ChannelWake::Via::kFdIn, fd} : ChannelWake{};
}

const std::string& TcpTransport::LaneStandIn::peerName() const { return lane()->peerName(); }

weftResult_t TcpTransport::tune(int fd) {
  CongestionOutcome got;
  return applyCongestion(fd, congestion_, &got);
}

weftResult_t TcpTransport::settle(int fd, CongestionOutcome* got) {
  closeInForkedChildren(fd);
  return applyCongestion(fd, congestion_, got);
}

weftResult_t TcpTransport::connectAll(Bootstrap& bs, const TcpOptions& options) {
  int n = bs.nranks(), me = bs.rank();
  const int nstreams = options.nstreams;
  bs_ = &bs;
  nstreams_ = nstreams;
  lanes_ = options.perDirection ? std::max(options.lanes, 1) : 0;
  bulkMin_ = options.bulkMin;
  spliceMin_ = options.spliceMin;
  congestion_ = options.congestion;
  ways_ = 1 + 2 * lanes_;
  const int perPeer = nstreams * ways_;
  fds_.clear();
  offers_.clear();
  for (int p = 0; p < n; ++p) {
    fds_.emplace_back(new std::atomic<int>[perPeer]);
    for (int i = 0; i < perPeer; ++i) fds_[p][i].store(-1);
    offers_.emplace_back(new std::atomic<int>[nstreams]);
    for (int s = 0; s < nstreams; ++s) offers_[p][s].store(-1);
  }
  lanesDone_.assign(n, 0);
  lanesDone_[me] = 1;
  atInit_.assign(n, 0);
  streams_.assign(n, std::vector<Stream>(nstreams));
  lazy_.clear();
  lazy_.resize(n);
  // Connection A to every peer now with WEFT_RUNTIME_CONNECT=0; else on first
  // use (lazy_connection.h), or now for the peers of a transport that watches
  // their deaths on it (connectNow); the lanes on first large use.
  if (!options.onUse) WEFT_CHECK(connectNow(std::vector<bool>(n, true)));
  WEFT_INFO(NET,
            "rank %d: TCP up, %d stream(s) per peer, connection A %s, %d lane(s) each way on a "
            "peer's first large call",
            me, nstreams, options.onUse ? "on first use" : "to every peer now", lanes_);
  return weftSuccess;
}

weftResult_t TcpTransport::connectNow(const std::vector<bool>& peers) {
  Bootstrap& bs = *bs_;
  const int n = bs.nranks(), me = bs.rank();
  // The lower rank of each pair connects, the higher accepts; all connects go
  // first, and they complete against the listener's backlog, so no pair waits
  // on another and the order of peers does not matter. Connection i of a pair
  // has tag base + i on both sides, so both agree which is which.
  auto wanted = [&](int p) { return p != me && peers[p] && !atInit_[p]; };
  for (int p = me + 1; p < n; ++p)
    for (int s = 0; s < nstreams_ && wanted(p); ++s) {
      int fd = -1;
      WEFT_CHECK(bs.connectPeer(p, kTagTransportBase + s * ways_, &fd));
      fds_[p][s * ways_].store(fd);
    }
  for (int p = 0; p < me; ++p)
    for (int s = 0; s < nstreams_ && wanted(p); ++s) {
      int fd = -1;
      WEFT_CHECK(bs.acceptPeer(p, kTagTransportBase + s * ways_, &fd));
      fds_[p][s * ways_].store(fd);
    }
  int inside = 0, between = 0;  // connections inside this host, and to other hosts
  std::string insideRuns = "-", betweenRuns = "-";  // what the last of each runs
  for (int p = 0; p < n; ++p) {
    if (!wanted(p)) continue;
    const std::string name = bs.peerName(p);
    for (int s = 0; s < nstreams_; ++s) {
      const int fd = fds_[p][s * ways_].load();
      CongestionOutcome got;
      WEFT_CHECK(settle(fd, &got));
      ++(got.sameHost ? inside : between);
      (got.sameHost ? insideRuns : betweenRuns) = got.running.empty() ? "?" : got.running;
      Stream& st = streams_[p][s];
      st.send[0] = st.send[1] = st.send[2] =
          own(std::make_unique<TcpChannel>(fd, name, spliceMin_));
      st.recv[0] = st.recv[1] = st.recv[2] = own(std::make_unique<TcpChannel>(fd, name));
    }
    atInit_[p] = 1;
  }
  if (inside + between > 0)
    WEFT_INFO(NET,
              "rank %d: TCP congestion control (WEFT_SOCKET_CONGESTION=%s): %d connection(s) "
              "inside this host on %s, %d to other hosts on %s",
              me, congestion_.c_str(), inside, insideRuns.c_str(), between, betweenRuns.c_str());
  return weftSuccess;
}

void TcpTransport::makeLazy(int peer) {
  lazy_[peer].reset(new std::unique_ptr<LazyConnection>[nstreams_]);
  for (int s = 0; s < nstreams_; ++s) {
    auto ready = [this, peer](int fd) {
      CongestionOutcome got;
      WEFT_CHECK(settle(fd, &got));
      WEFT_INFO(NET, "rank %d: TCP connection A to %s made on first use (%s, on %s)", bs_->rank(),
                bs_->peerName(peer).c_str(), got.sameHost ? "inside this host" : "to another host",
                got.running.empty() ? "?" : got.running.c_str());
      return weftSuccess;
    };
    lazy_[peer][s] = std::make_unique<LazyConnection>(
        bs_, peer, kTagTransportBase + static_cast<uint32_t>(s * ways_), &fds_[peer][s * ways_],
        &offers_[peer][s], spliceMin_, ready);
    Stream& st = streams_[peer][s];
    st.send[0] = st.send[1] = st.send[2] = lazy_[peer][s]->sendChannel();
    st.recv[0] = st.recv[1] = st.recv[2] = lazy_[peer][s]->recvChannel();
  }
}

bool TcpTransport::advanceLanes(int peer) {
  if (lanes_ == 0) {
    lanesDone_[peer] = 1;
    return true;
  }
  const int me = bs_->rank();
  // A peer that died or left its communicator closed connection A. POLLRDHUP
  // alone, so a call header waiting there does not count.
  pollfd a{socketFd(peer, 0), POLLRDHUP, 0};
  if (::poll(&a, 1, 0) > 0 && (a.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    failLanes(peer, bs_->peerName(peer) +
                        " closed its connection before its large-call connections were open "
                        "(process exited, or its communicator failed)");
    return true;
  }
  for (int s = 0; s < nstreams_; ++s)
    for (int i = s * ways_ + 1; i < (s + 1) * ways_; ++i) {
      if (fds_[peer][i].load() >= 0) continue;
      int fd = -1;
      const uint32_t tag = kTagTransportBase + static_cast<uint32_t>(i);
      weftResult_t r =
          me < peer ? bs_->connectPeer(peer, tag, &fd, true) : bs_->tryAcceptPeer(peer, tag, &fd);
      if (r == weftSuccess && fd >= 0) r = tune(fd);
      closeInForkedChildren(fd);
      fds_[peer][i].store(fd);
      if (r != weftSuccess) {
        failLanes(peer, "opening the large-call connections to " + bs_->peerName(peer) + ": " +
                            lastError());
        return true;
      }
      if (fd < 0) return false;  // not there yet
    }
  buildLanes(peer);
  return true;
}

void TcpTransport::failLanes(int peer, const std::string& why) {
  lanesDone_[peer] = 1;
  const std::string name = bs_->peerName(peer);
  for (int s = 0; s < nstreams_; ++s) {
    Channel* failed = own(std::make_unique<FailedChannel>(name, why));
    Stream& st = streams_[peer][s];
    st.send[1] = st.recv[1] = st.send[2] = st.recv[2] = failed;
  }
}

void TcpTransport::buildLanes(int peer) {
  lanesDone_[peer] = 1;
  const int me = bs_->rank();
  const std::string name = bs_->peerName(peer);
  for (int s = 0; s < nstreams_; ++s) {
    Stream& st = streams_[peer][s];
    const int base = s * ways_;
    // Lanes 1..L carry the higher rank's bulk data, L+1..2L the lower rank's.
    const bool higher = me > peer;
    const int mine = higher ? base + 1 : base + 1 + lanes_;
    const int theirs = higher ? base + 1 + lanes_ : base + 1;
    std::vector<Channel*> out, in;
    for (int l = 0; l < lanes_; ++l) {
      out.push_back(
          own(std::make_unique<TcpChannel>(fds_[peer][mine + l].load(), name, spliceMin_)));
      in.push_back(own(std::make_unique<TcpChannel>(fds_[peer][theirs + l].load(), name)));
    }
    st.send[1] = lanes_ == 1 ? out[0] : own(std::make_unique<StripedChannel>(out));
    st.recv[1] = lanes_ == 1 ? in[0] : own(std::make_unique<StripedChannel>(in));
    st.send[2] = out[0];
    st.recv[2] = in[0];
  }
  WEFT_INFO(NET, "rank %d: TCP lanes to %s open (%d per direction and stream); %d connection(s)",
            me, name.c_str(), lanes_, openConnections());
}

weftResult_t setUpTcpTransport(TransportSetup& setup, std::unique_ptr<Transport>* made) {
  auto tcp = std::make_unique<TcpTransport>();
  if (setup.bootstrap.nranks() > 1) WEFT_CHECK(tcp->connectAll(setup.bootstrap, setup.options.tcp));
  setup.tcp = tcp.get();
  *made = std::move(tcp);
  return weftSuccess;
}

}  // namespace weft
