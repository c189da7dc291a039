// Bootstrap: after the rendezvous with the root, every rank knows every rank's
// listener address. The bootstrap then offers what later setup steps need: an
// out-of-band ring allgather, and authenticated point-to-point connections
// (each opened with a Hello carrying the job secret and a tag saying what the
// connection is for, so transports can open several per peer in any order).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/wait.h"
#include "bootstrap/hello_gate.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

namespace weft {

class Bootstrap {
 public:
  Bootstrap() = default;
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  // Rendezvous through the root named in `id`. Until finishInit, a thread
  // watches the root's connection: when the root reports that another rank
  // died or failed its init (or the root's own process died), it records the
  // sentence and sets *abortFlag, which every wait of the init polls, so the
  // caller's init fails within a poll period instead of after WEFT_TIMEOUT.
  weftResult_t init(const UniqueIdBody& id, int rank, int nranks, std::atomic<bool>* abortFlag);
  // Ends the watch (before peerFailure is read for the last time).
  void stopWatch();
  // Tells the root this rank's init succeeded or, with `why`, failed (the
  // root passes that on to ranks still initialising); stops the watch first.
  void finishInit(bool ok, const std::string& why);
  // The root's sentence about another rank's death or failure, if one came
  // (waits up to `waitMs` for it: a cascade may reach this rank first).
  bool peerFailure(int waitMs, std::string* sentence);

  // Every rank contributes `bytes` at data + rank*bytes; on return all slots
  // are filled. In ceil(log2 n) steps (bootstrap_allgather.cc).
  weftResult_t allgather(void* data, size_t bytes);
  weftResult_t barrier();

  // Authenticated connection to/from `peer` for purpose `tag`; both sides must
  // agree on the tag. Connections that arrive for another (peer, tag) are kept
  // until asked for; ones without the secret are dropped. `afterInit`: the
  // peer's listener has been up since init, so a refused connect fails at once.
  weftResult_t connectPeer(int peer, uint32_t tag, int* fd, bool afterInit = false);
  weftResult_t acceptPeer(int peer, uint32_t tag, int* fd);
  // acceptPeer without waiting: *fd = -1 when that connection has not come yet.
  weftResult_t tryAcceptPeer(int peer, uint32_t tag, int* fd);
  // From now on closes the connection from `peer` for `tag` if one is here or
  // comes (one that lost a race to be the pair's connection).
  void refuseArrivals(int peer, uint32_t tag);
  // What a caller of tryAcceptPeer may sleep on (POLLIN) until a connection
  // arrives: the listener; -1 while an accepted one still owes its Hello,
  // whose bytes the listener would not report (retry then).
  int arrivalFd() const;

  // Wakes anything blocked in this bootstrap (used by abort).
  void shutdownAll();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const SockAddr& peerAddr(int r) const { return addrs_[r]; }
  std::string peerName(int r) const;  // "rank 3 (10.0.0.2:4567)"

 private:
  weftResult_t rendezvous(const UniqueIdBody& id);
  // Takes the connections that arrived (within `waitMs`) and finished their
  // Hello into stash_, dropping those without this job's secret.
  weftResult_t stashArrivals(int waitMs);
  void watchRoot();
  // The allgather's connections of step k >= 1 (distance 2^k): to rank + 2^k
  // and from rank - 2^k, made at the first allgather (step 0 is the ring's).
  weftResult_t openSteps();
  // Sends `out` on `outFd` while it receives `in` from `inFd`, both at once
  // (neither side may wait for the other to read).
  weftResult_t exchange(int outFd, const char* out, int inFd, char* in, size_t bytes, int step,
                        int to, int from, const Deadline& deadline);

  int rank_ = -1;
  int nranks_ = 0;
  uint8_t secret_[kSecretBytes] = {};
  bool sameUserOnly_ = false;  // kIdSameUserOnly
  const std::atomic<bool>* abort_ = nullptr;
  int listenFd_ = -1;
  int ringNext_ = -1;  // bootstrap ring: send to rank+1, receive from rank-1
  int ringPrev_ = -1;
  std::vector<int> stepOut_, stepIn_;  // [k]: the allgather's step k >= 1 (openSteps)
  std::vector<SockAddr> addrs_;
  std::map<std::pair<int, uint32_t>, int> stash_;  // accepted but not yet claimed
  std::set<std::pair<int, uint32_t>> refused_;     // closed on arrival (refuseArrivals)
  std::unique_ptr<HelloGate> gate_;                // connections still owing their Hello

  // The watch of the root's connection during init (see init).
  int rootFd_ = -1;
  std::string rootName_;
  std::atomic<bool>* raise_ = nullptr;
  std::thread watch_;
  std::atomic<bool> stopWatch_{false};
  int wakeWatch_ = -1;  // eventfd: stopWatch ends the watch's poll at once
  std::mutex noticeMu_;
  std::condition_variable noticeCv_;
  std::string notice_;  // guarded by noticeMu_
};

// Tags of bootstrap connections (transports add their own above kTagTransportBase).
constexpr uint32_t kTagRing = 1;
constexpr uint32_t kTagAllgatherStep = 100;  // + k: the allgather's step k (up to 63)
constexpr uint32_t kTagTransportBase = 1000;

}  // namespace weft
