// Rendezvous root server (see root.h).
#include "bootstrap/root.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fd_limit.h"
#include "base/log.h"
#include "bootstrap/hello_gate.h"
#include "bootstrap/peer_user.h"

namespace weft {
namespace {

// How long a failed rendezvous still answers ranks whose Hello is on its way
// (in the listen backlog or half read), so that they hear why, not a reset.
constexpr double kLateHelloSec = 0.2;

// Broadcasts of a failure in progress. The root may live in a rank's process,
// and that rank fails (and may exit) as soon as its own copy arrives: exit
// waits, briefly, until the other ranks have theirs.
std::atomic<int> broadcasting{0};
struct ExitDrain {
  ~ExitDrain() {
    for (int i = 0; i < 200 && broadcasting.load() > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
} exitDrain;

class BroadcastScope {
 public:
  BroadcastScope() { broadcasting.fetch_add(1); }
  ~BroadcastScope() { broadcasting.fetch_sub(1); }
};

struct Arrival {
  int fd = -1;
  WireAddr listen{};
};

class RootJob {
 public:
  RootJob(int listenFd, const uint8_t* secret, bool sameUserOnly, Deadline deadline)
      : listenFd_(listenFd), deadline_(deadline), sameUserOnly_(sameUserOnly) {
    std::memcpy(secret_, secret, kSecretBytes);
  }
  ~RootJob() {
    gate_.reset();
    for (Arrival& a : arrivals_) closeFd(&a.fd);
    closeFd(&listenFd_);
  }
  void run();

 private:
  // Takes a connection whose Hello arrived; false (and closes) for anything
  // that is not a rank of this job.
  bool admit(int fd, const Hello& h);
  // Accepts and reads Hellos from many connections at once (poll), so that
  // silent strangers cost nothing but their own 5 s slot.
  void gather();
  // The sentence for an arrived rank whose connection closed, or "".
  std::string arrivedRankDied();
  // One poll over the open connections of the ranks that arrived; `readable`
  // gets the ranks whose connection has something (or its end) to read.
  bool pollArrived(int waitMs, std::vector<int>* readable);
  void reply(int fd, int32_t status, const std::string& text, const std::vector<WireAddr>& table);
  void failAll(const std::string& text);
  // After the table: waits for every rank's InitReport and tells the others
  // at once when a rank dies (its connection closes) or reports a failure.
  void watchInit();
  // Reads rank r's InitReport: false when it is ready; else true, with the
  // sentence for the others and whether the rank died (no report came).
  bool readReport(int r, std::string* sentence, bool* died);

  int listenFd_;
  Deadline deadline_;  // computed by the starting thread: no config reads at exit time
  bool sameUserOnly_;
  uint8_t secret_[kSecretBytes];
  int nranks_ = -1;
  size_t openAtStart_ = 0;  // descriptors open before the first connection
  int arrived_ = 0;
  std::vector<Arrival> arrivals_;
  std::string conflict_;             // first inconsistency seen (nranks mismatch, duplicate rank)
  std::unique_ptr<HelloGate> gate_;  // connections still owing their Hello
  std::vector<pollfd> pollFds_;      // pollArrived's, kept between calls
  std::vector<int> pollRanks_;
};

bool RootJob::admit(int fd, const Hello& h) {
  if (!helloValid(h, kHelloRoot, secret_)) {
    WEFT_WARN(BOOTSTRAP, "root: dropped a connection without this job's secret");
    close(fd);
    return false;
  }
  if (sameUserOnly_ && !peerIsSameUser(fd)) {
    WEFT_WARN(BOOTSTRAP,
              "root: dropped a connection from another user (this job's secret comes from its "
              "address; WEFT_SECRET would make it its own)");
    close(fd);
    return false;
  }
  if (h.nranks <= 0 || h.nranks > kMaxRanks || h.rank < 0 || h.rank >= h.nranks) {
    conflict_ =
        "a rank announced rank " + std::to_string(h.rank) + " of " + std::to_string(h.nranks);
    close(fd);
    return false;
  }
  if (nranks_ < 0) {
    nranks_ = h.nranks;
    arrivals_.resize(nranks_);
    // One connection per rank stays open here until every rank arrived.
    const std::string who = "the rendezvous root of " + std::to_string(nranks_) + " ranks";
    if (ensureFdRoom(static_cast<size_t>(nranks_),
                     static_cast<size_t>(nranks_) + HelloGate::kMaxPending, who.c_str(),
                     openAtStart_) != weftSuccess)
      conflict_ = lastError();
  }
  if (h.nranks != nranks_) {
    if (conflict_.empty())
      conflict_ = "rank " + std::to_string(h.rank) +
                  " was started with nranks=" + std::to_string(h.nranks) +
                  " but rank(s) before it with nranks=" + std::to_string(nranks_);
    close(fd);
    return false;
  }
  Arrival& slot = arrivals_[h.rank];
  if (slot.fd >= 0) {
    if (conflict_.empty()) conflict_ = "two processes both claim rank " + std::to_string(h.rank);
    close(fd);
    return false;
  }
  slot.fd = fd;
  slot.listen = h.listen;
  ++arrived_;
  return true;
}

void RootJob::gather() {
  openAtStart_ = openFdCount();  // before any rank's connection
  gate_ = std::make_unique<HelloGate>(listenFd_);
  HelloGate& gate = *gate_;
  std::vector<std::pair<int, Hello>> ready;
  while ((nranks_ < 0 || arrived_ < nranks_) && (conflict_.empty() || nranks_ <= 0)) {
    if (deadline_.expired()) break;
    ready.clear();
    if (gate.poll(deadline_.remainingMs(100), &ready) != weftSuccess) {
      if (conflict_.empty()) conflict_ = lastError();
      break;
    }
    for (const auto& [fd, hello] : ready) admit(fd, hello);
    if (conflict_.empty()) conflict_ = arrivedRankDied();
  }
}

bool RootJob::pollArrived(int waitMs, std::vector<int>* readable) {
  pollFds_.clear();
  pollRanks_.clear();
  readable->clear();
  for (int r = 0; r < static_cast<int>(arrivals_.size()); ++r) {
    if (arrivals_[r].fd < 0) continue;
    pollFds_.push_back({arrivals_[r].fd, POLLIN, 0});
    pollRanks_.push_back(r);
  }
  if (pollFds_.empty()) return true;
  if (poll(pollFds_.data(), pollFds_.size(), waitMs) < 0) return errno == EINTR;
  for (size_t i = 0; i < pollFds_.size(); ++i)
    if (pollFds_[i].revents != 0) readable->push_back(pollRanks_[i]);
  return true;
}

std::string RootJob::arrivedRankDied() {
  // An arrived rank sends nothing until the table: readable means closed.
  std::vector<int> closed;
  if (!pollArrived(0, &closed) || closed.empty()) return "";
  const int r = closed.front();
  return "rank " + std::to_string(r) + " (" + fromWire(arrivals_[r].listen).str() +
         ") died before every rank arrived";
}

void RootJob::reply(int fd, int32_t status, const std::string& text,
                    const std::vector<WireAddr>& table) {
  RootReply rep{status, nranks_, 0, 0};
  rep.bytes = status == 0 ? static_cast<uint32_t>(table.size() * sizeof(WireAddr))
                          : static_cast<uint32_t>(text.size());
  Deadline d = Deadline::after(5.0);
  if (sendAll(fd, &rep, sizeof(rep), d, nullptr, "a rank") != weftSuccess) return;
  if (status == 0)
    sendAll(fd, table.data(), rep.bytes, d, nullptr, "a rank");
  else
    sendAll(fd, text.data(), rep.bytes, d, nullptr, "a rank");
}

void RootJob::failAll(const std::string& text) {
  BroadcastScope scope;
  WEFT_WARN(BOOTSTRAP, "root: %s", text.c_str());
  for (Arrival& a : arrivals_) {
    if (a.fd >= 0) reply(a.fd, 1, text, {});
  }
  const Deadline late = Deadline::after(kLateHelloSec);
  std::vector<std::pair<int, Hello>> ready;
  while (gate_ && !late.expired()) {
    ready.clear();
    if (gate_->poll(late.remainingMs(50), &ready) != weftSuccess) break;
    for (const auto& [fd, hello] : ready) {
      if (helloValid(hello, kHelloRoot, secret_)) reply(fd, 1, text, {});
      close(fd);
    }
  }
}

void RootJob::run() {
  const Deadline& deadline = deadline_;
  gather();
  if (!conflict_.empty()) {
    failAll("rendezvous failed: " + conflict_);
    return;
  }
  if (nranks_ < 0 || arrived_ < nranks_) {
    std::string missing;
    int count = 0;
    for (int r = 0; r < nranks_; ++r) {
      if (arrivals_[r].fd >= 0) continue;
      if (count < 16) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      ++count;
    }
    if (count > 16) missing += ",...";
    failAll("rendezvous timed out after " + std::to_string(static_cast<int>(deadline.seconds())) +
            " s (WEFT_TIMEOUT): " + std::to_string(count) + " of " + std::to_string(nranks_) +
            " ranks never arrived (ranks " + missing + ")");
    return;
  }
  std::vector<WireAddr> table(nranks_);
  for (int r = 0; r < nranks_; ++r) table[r] = arrivals_[r].listen;
  for (Arrival& a : arrivals_) reply(a.fd, 0, "", table);
  WEFT_INFO(BOOTSTRAP, "root: %d ranks rendezvoused", nranks_);
  watchInit();
}

bool RootJob::readReport(int r, std::string* sentence, bool* died) {
  // The ready path allocates nothing: it may run while the ranks' first
  // calls do, which must not allocate (tests/unit/hot_path_alloc_test.cc).
  InitReport rep{};
  const Deadline d = Deadline::after(1.0);
  bool read = recvAll(arrivals_[r].fd, &rep, sizeof(rep), d, nullptr, "a rank") == weftSuccess;
  if (read && rep.status == 0) return false;
  std::string text;
  if (read) {
    text.assign(std::min(rep.bytes, kMaxNoticeBytes), '\0');
    read = recvAll(arrivals_[r].fd, &text[0], text.size(), d, nullptr, "a rank") == weftSuccess;
  }
  *died = !read;
  *sentence = "rank " + std::to_string(r) + " (" + fromWire(arrivals_[r].listen).str() + ")" +
              (read ? " failed its initialisation: " + text
                    : " died during initialisation (its connection to the rendezvous root "
                      "closed before it finished)");
  return true;
}

void RootJob::watchInit() {
  // The rendezvous is over: no one else may connect, and nothing of it may
  // outlive the ranks' init (a rank counting its descriptors sees none).
  gate_.reset();
  closeFd(&listenFd_);
  // Init after the rendezvous is a series of steps each bounded by
  // WEFT_TIMEOUT; watching for a few of them covers every slow but live job.
  const Deadline until = Deadline::after(4 * deadline_.seconds());
  // Sized now, so that reading the ranks' reports allocates nothing.
  std::vector<int> readable;
  readable.reserve(arrivals_.size());
  pollFds_.reserve(arrivals_.size());
  pollRanks_.reserve(arrivals_.size());
  std::string failure;
  bool died = false;
  while (!until.expired()) {
    if (!pollArrived(until.remainingMs(1000), &readable)) break;
    if (pollFds_.empty()) return;  // every rank finished
    for (int r : readable) {
      const bool failed = readReport(r, &failure, &died);
      closeFd(&arrivals_[r].fd);
      if (!failed) continue;
      BroadcastScope scope;
      // A death is logged nowhere else; a failure, by the rank that failed.
      if (died)
        WEFT_WARN(BOOTSTRAP, "root: %s", failure.c_str());
      else
        WEFT_INFO(BOOTSTRAP, "root: %s", failure.c_str());
      for (Arrival& a : arrivals_)
        if (a.fd >= 0) reply(a.fd, kRootPeerFailed, failure, {});
      return;  // the destructor closes the others
    }
  }
  for (Arrival& a : arrivals_)
    if (a.fd >= 0) reply(a.fd, kRootStopWatching, "", {});
}

}  // namespace

weftResult_t RootServer::start(const SockAddr& bindAddr, const uint8_t* secret, bool sameUserOnly,
                               SockAddr* bound) {
  int fd = -1;
  WEFT_CHECK(listenOn(bindAddr, &fd, bound));
  auto job = std::make_shared<RootJob>(fd, secret, sameUserOnly, Deadline::fromConfig());
  std::thread([job] { job->run(); }).detach();
  return weftSuccess;
}

}  // namespace weft
