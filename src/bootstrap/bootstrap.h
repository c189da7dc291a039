// Bootstrap: after the rendezvous with the root, every rank knows every rank's
// listener address. The bootstrap then offers what later setup steps need: an
// out-of-band ring allgather, and authenticated point-to-point connections
// (each opened with a Hello carrying the job secret and a tag saying what the
// connection is for, so transports can open several per peer in any order).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

  // Rendezvous through the root named in `id`.
  weftResult_t init(const UniqueIdBody& id, int rank, int nranks,
                    const std::atomic<bool>* abortFlag);

  // Every rank contributes `bytes` at data + rank*bytes; on return all slots are filled.
  weftResult_t allgather(void* data, size_t bytes);
  weftResult_t barrier();

  // Authenticated connection to/from `peer` for purpose `tag`; both sides must
  // agree on the tag. Connections that arrive for another (peer, tag) are kept
  // until asked for; ones without the secret are dropped.
  weftResult_t connectPeer(int peer, uint32_t tag, int* fd);
  weftResult_t acceptPeer(int peer, uint32_t tag, int* fd);

  // Wakes anything blocked in this bootstrap (used by abort).
  void shutdownAll();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const SockAddr& peerAddr(int r) const { return addrs_[r]; }
  std::string peerName(int r) const;  // "rank 3 (10.0.0.2:4567)"

 private:
  weftResult_t rendezvous(const UniqueIdBody& id);

  int rank_ = -1;
  int nranks_ = 0;
  uint8_t secret_[kSecretBytes] = {};
  const std::atomic<bool>* abort_ = nullptr;
  int listenFd_ = -1;
  int ringNext_ = -1;  // bootstrap ring: send to rank+1, receive from rank-1
  int ringPrev_ = -1;
  std::vector<SockAddr> addrs_;
  std::map<std::pair<int, uint32_t>, int> stash_;  // accepted but not yet claimed
  std::unique_ptr<HelloGate> gate_;                // connections still owing their Hello
};

// Tags of bootstrap connections (transports add their own above kTagTransportBase).
constexpr uint32_t kTagRing = 1;
constexpr uint32_t kTagTransportBase = 1000;

}  // namespace weft
