// Bootstrap implementation (see bootstrap.h).
#include "bootstrap/bootstrap.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "bootstrap/hello_gate.h"
#include "bootstrap/peer_user.h"

namespace weft {

Bootstrap::~Bootstrap() {
  finishInit(false, "the communicator was destroyed during initialisation");
  gate_.reset();  // closes the connections still owing a Hello
  closeFd(&ringNext_);
  closeFd(&ringPrev_);
  for (int& fd : stepOut_) closeFd(&fd);
  for (int& fd : stepIn_) closeFd(&fd);
  closeFd(&listenFd_);
  for (auto& kv : stash_) close(kv.second);
}

void Bootstrap::shutdownAll() {
  if (ringNext_ >= 0) shutdown(ringNext_, SHUT_RDWR);
  if (ringPrev_ >= 0) shutdown(ringPrev_, SHUT_RDWR);
  for (int fd : stepOut_)
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
  for (int fd : stepIn_)
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
}

std::string Bootstrap::peerName(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && r < static_cast<int>(addrs_.size())) s += " (" + addrs_[r].str() + ")";
  return s;
}

weftResult_t Bootstrap::init(const UniqueIdBody& id, int rank, int nranks,
                             std::atomic<bool>* abortFlag) {
  rank_ = rank;
  nranks_ = nranks;
  abort_ = abortFlag;
  raise_ = abortFlag;
  std::memcpy(secret_, id.secret, kSecretBytes);
  sameUserOnly_ = (id.flags & kIdSameUserOnly) != 0;
  WEFT_CHECK(rendezvous(id));
  // Without a way to wake it, the watch would notice stopWatch only at its
  // next poll timeout, and every init would wait up to that long to end.
  wakeWatch_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeWatch_ < 0)
    return setError(weftSystemError, "rank %d: eventfd for the init watch failed: %s", rank_,
                    strerror(errno));
  watch_ = std::thread([this] { watchRoot(); });
  if (nranks_ == 1) return weftSuccess;
  // The ring: connect forward first (it completes against the backlog), then accept.
  WEFT_CHECK(connectPeer((rank_ + 1) % nranks_, kTagRing, &ringNext_));
  WEFT_CHECK(acceptPeer((rank_ + nranks_ - 1) % nranks_, kTagRing, &ringPrev_));
  return weftSuccess;
}

weftResult_t Bootstrap::rendezvous(const UniqueIdBody& id) {
  SockAddr root = fromWire(id.root);
  rootName_ = root.str();
  // Listen on the interface we would use to reach the root's network.
  SockAddr local;
  std::string ifname;
  if (sameUserOnly_ && isLoopback(root) && !configIsSet("WEFT_SOCKET_IFNAME")) {
    local = root;  // a loopback-only job (kIdSameUserOnly): no listener on the network
    ifname = "loopback, as the root";
  } else {
    WEFT_CHECK(pickInterface(&local, &ifname));
  }
  local.setPort(0);
  SockAddr bound;
  WEFT_CHECK(listenOn(local, &listenFd_, &bound));
  WEFT_INFO(BOOTSTRAP, "rank %d listens on %s (%s); root is %s", rank_, bound.str().c_str(),
            ifname.c_str(), root.str().c_str());

  Deadline deadline = Deadline::fromConfig();
  int fd = -1;
  WEFT_CHECK(connectTo(root, deadline, abort_, "the rendezvous root", &fd));
  Hello h{};
  h.magic = kWireMagic;
  h.version = kWireVersion;
  h.kind = kHelloRoot;
  std::memcpy(h.secret, secret_, kSecretBytes);
  h.rank = rank_;
  h.nranks = nranks_;
  h.listen = toWire(bound);
  weftResult_t r = sendAll(fd, &h, sizeof(h), deadline, abort_, "the rendezvous root");
  RootReply rep{};
  // The root reports missing ranks when its own WEFT_TIMEOUT expires, which is
  // about when ours does: wait a little longer so that its sentence reaches us.
  Deadline replyDeadline = Deadline::after(deadline.seconds() + std::min(5.0, deadline.seconds()));
  if (r == weftSuccess)
    r = recvAll(fd, &rep, sizeof(rep), replyDeadline, abort_, "the rendezvous root");
  if (r == weftSuccess && rep.status != 0) {
    std::string text(std::min<uint32_t>(rep.bytes, 4096), '\0');
    recvAll(fd, &text[0], text.size(), replyDeadline, abort_, "the rendezvous root");
    close(fd);
    return setError(weftRemoteError, "%s", text.c_str());
  }
  if (r == weftSuccess && !rootReplyProblem(rep, nranks_).empty()) {
    close(fd);
    return setError(weftInternalError, "rendezvous root sent a malformed table");
  }
  std::vector<WireAddr> table(nranks_);
  if (r == weftSuccess)
    r = recvAll(fd, table.data(), rep.bytes, replyDeadline, abort_, "the rendezvous root");
  if (r == weftSuccess)
    rootFd_ = fd;  // watched until finishInit
  else
    close(fd);
  if (r != weftSuccess) {
    return setError(r, "rank %d: rendezvous with root %s failed: %s", rank_, root.str().c_str(),
                    lastError().c_str());
  }
  addrs_.resize(nranks_);
  for (int i = 0; i < nranks_; ++i) addrs_[i] = fromWire(table[i]);
  return weftSuccess;
}

void Bootstrap::watchRoot() {
  std::string sentence;
  while (!stopWatch_.load()) {
    pollfd p[2] = {{rootFd_, POLLIN, 0}, {wakeWatch_, POLLIN, 0}};
    if (poll(p, 2, 100) <= 0 || p[0].revents == 0) continue;
    RootReply rep{};
    const Deadline d = Deadline::after(1.0);
    if (recvAll(rootFd_, &rep, sizeof(rep), d, nullptr, "the rendezvous root") != weftSuccess) {
      sentence = "the rendezvous root at " + rootName_ +
                 " closed its connection during initialisation: the process that serves it "
                 "(rank 0, or the one that created the unique id) died";
    } else if (rep.status == kRootStopWatching) {
      return;
    } else {
      sentence.assign(std::min(rep.bytes, kMaxNoticeBytes), '\0');
      if (recvAll(rootFd_, &sentence[0], sentence.size(), d, nullptr, "the rendezvous root") !=
          weftSuccess)
        sentence = "the rendezvous root reported a failure it could not finish sending";
    }
    break;
  }
  if (sentence.empty()) return;
  {
    std::lock_guard<std::mutex> lock(noticeMu_);
    notice_ = sentence;
  }
  noticeCv_.notify_all();
  WEFT_INFO(BOOTSTRAP, "rank %d: %s", rank_, sentence.c_str());
  // Every wait of the init polls the flag at least every 100 ms; the sockets
  // are the init thread's to touch.
  if (raise_ != nullptr) raise_->store(true);
}

bool Bootstrap::peerFailure(int waitMs, std::string* sentence) {
  std::unique_lock<std::mutex> lock(noticeMu_);
  if (waitMs > 0)
    noticeCv_.wait_for(lock, std::chrono::milliseconds(waitMs), [&] { return !notice_.empty(); });
  if (notice_.empty()) return false;
  *sentence = notice_;
  return true;
}

void Bootstrap::stopWatch() {
  stopWatch_.store(true);
  if (wakeWatch_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wakeWatch_, &one, sizeof(one));
  }
  if (watch_.joinable()) watch_.join();
  closeFd(&wakeWatch_);  // the watch has ended: a communicator keeps no descriptor for it
}

void Bootstrap::finishInit(bool ok, const std::string& why) {
  stopWatch();
  if (rootFd_ < 0) return;
  InitReport rep{ok ? 0 : 1, 0};
  const std::string text = why.substr(0, kMaxNoticeBytes);
  if (!ok) rep.bytes = static_cast<uint32_t>(text.size());
  const Deadline d = Deadline::after(1.0);
  if (sendAll(rootFd_, &rep, sizeof(rep), d, nullptr, "the rendezvous root") == weftSuccess) {
    if (!ok) sendAll(rootFd_, text.data(), text.size(), d, nullptr, "the rendezvous root");
    // The root closes its end once it has read the report: waiting for that
    // (one round trip) means that, when init returns, no descriptor or
    // thread work of the root is left over for this rank.
    pollfd p{rootFd_, POLLIN, 0};
    char byte;
    if (poll(&p, 1, d.remainingMs(1000)) > 0) (void)recv(rootFd_, &byte, 1, MSG_DONTWAIT);
  }
  closeFd(&rootFd_);
}

weftResult_t Bootstrap::connectPeer(int peer, uint32_t tag, int* fd, bool afterInit) {
  Deadline deadline = Deadline::fromConfig();
  std::string what = peerName(peer);
  WEFT_CHECK(connectTo(addrs_[peer], deadline, abort_, what.c_str(), fd, afterInit));
  Hello h{};
  h.magic = kWireMagic;
  h.version = kWireVersion;
  h.kind = kHelloPeer;
  std::memcpy(h.secret, secret_, kSecretBytes);
  h.rank = rank_;
  h.nranks = nranks_;
  h.tag = tag;
  weftResult_t r = sendAll(*fd, &h, sizeof(h), deadline, abort_, what.c_str());
  if (r != weftSuccess) closeFd(fd);
  return r;
}

weftResult_t Bootstrap::acceptPeer(int peer, uint32_t tag, int* fd) {
  auto key = std::make_pair(peer, tag);
  Deadline deadline = Deadline::fromConfig();
  for (;;) {
    auto it = stash_.find(key);
    if (it != stash_.end()) {
      *fd = it->second;
      stash_.erase(it);
      return weftSuccess;
    }
    if (abort_ != nullptr && abort_->load())
      return setError(weftInvalidUsage, "communicator aborted while waiting for %s",
                      peerName(peer).c_str());
    if (deadline.expired())
      return setError(weftTimeout,
                      "rank %d: %s never connected (tag %u) within %.0f s (WEFT_TIMEOUT)", rank_,
                      peerName(peer).c_str(), tag, deadline.seconds());
    WEFT_CHECK(stashArrivals(deadline.remainingMs(100)));
  }
}

weftResult_t Bootstrap::tryAcceptPeer(int peer, uint32_t tag, int* fd) {
  *fd = -1;
  WEFT_CHECK(stashArrivals(0));
  auto it = stash_.find(std::make_pair(peer, tag));
  if (it == stash_.end()) return weftSuccess;
  *fd = it->second;
  stash_.erase(it);
  return weftSuccess;
}

void Bootstrap::refuseArrivals(int peer, uint32_t tag) {
  const auto key = std::make_pair(peer, tag);
  refused_.insert(key);
  auto it = stash_.find(key);
  if (it == stash_.end()) return;
  close(it->second);
  stash_.erase(it);
}

int Bootstrap::arrivalFd() const { return gate_ && gate_->pending() > 0 ? -1 : listenFd_; }

weftResult_t Bootstrap::stashArrivals(int waitMs) {
  std::vector<std::pair<int, Hello>> ready;
  if (!gate_) gate_ = std::make_unique<HelloGate>(listenFd_);
  WEFT_CHECK(gate_->poll(waitMs, &ready));
  for (const auto& [s, h] : ready) {
    if (!helloValid(h, kHelloPeer, secret_) || h.nranks != nranks_ || h.rank < 0 ||
        h.rank >= nranks_) {
      WEFT_WARN(BOOTSTRAP, "rank %d dropped a connection without this job's secret", rank_);
      close(s);
      continue;
    }
    if (sameUserOnly_ && !peerIsSameUser(s)) {
      WEFT_WARN(BOOTSTRAP, "rank %d dropped a connection from another user", rank_);
      close(s);
      continue;
    }
    auto got = std::make_pair(static_cast<int>(h.rank), h.tag);
    if (refused_.count(got)) {
      close(s);
      continue;
    }
    if (stash_.count(got)) {
      WEFT_WARN(BOOTSTRAP, "rank %d: duplicate connection from rank %d tag %u dropped", rank_,
                h.rank, h.tag);
      close(s);
      continue;
    }
    stash_[got] = s;
  }
  return weftSuccess;
}

}  // namespace weft
