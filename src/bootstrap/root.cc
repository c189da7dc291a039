// Rendezvous root server (see root.h).
#include "bootstrap/root.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fd_limit.h"
#include "base/log.h"
#include "bootstrap/hello_gate.h"

namespace weft {
namespace {

struct Arrival {
  int fd = -1;
  WireAddr listen{};
};

class RootJob {
 public:
  RootJob(int listenFd, const uint8_t* secret, Deadline deadline)
      : listenFd_(listenFd), deadline_(deadline) {
    std::memcpy(secret_, secret, kSecretBytes);
  }
  ~RootJob() {
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
  void reply(int fd, int32_t status, const std::string& text, const std::vector<WireAddr>& table);
  void failAll(const std::string& text);

  int listenFd_;
  Deadline deadline_;  // computed by the starting thread: no config reads at exit time
  uint8_t secret_[kSecretBytes];
  int nranks_ = -1;
  size_t openAtStart_ = 0;  // descriptors open before the first connection
  int arrived_ = 0;
  std::vector<Arrival> arrivals_;
  std::string conflict_;  // first inconsistency seen (nranks mismatch, duplicate rank)
};

bool RootJob::admit(int fd, const Hello& h) {
  if (!helloValid(h, kHelloRoot, secret_)) {
    WEFT_WARN(BOOTSTRAP, "root: dropped a connection without this job's secret");
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
  HelloGate gate(listenFd_);
  std::vector<std::pair<int, Hello>> ready;
  while ((nranks_ < 0 || arrived_ < nranks_) && (conflict_.empty() || nranks_ <= 0)) {
    if (deadline_.expired()) break;
    ready.clear();
    if (gate.poll(deadline_.remainingMs(100), &ready) != weftSuccess) {
      if (conflict_.empty()) conflict_ = lastError();
      break;
    }
    for (const auto& [fd, hello] : ready) admit(fd, hello);
  }
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
  WEFT_WARN(BOOTSTRAP, "root: %s", text.c_str());
  for (Arrival& a : arrivals_) {
    if (a.fd >= 0) reply(a.fd, 1, text, {});
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
}

}  // namespace

weftResult_t RootServer::start(const SockAddr& bindAddr, const uint8_t* secret, SockAddr* bound) {
  int fd = -1;
  WEFT_CHECK(listenOn(bindAddr, &fd, bound));
  auto job = std::make_shared<RootJob>(fd, secret, Deadline::fromConfig());
  std::thread([job] { job->run(); }).detach();
  return weftSuccess;
}

}  // namespace weft
