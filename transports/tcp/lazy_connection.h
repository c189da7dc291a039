// Connection A of one (peer, stream) made on first use (WEFT_RUNTIME_CONNECT=1),
// so that a rank holds connections only to the peers it talks to.
//
// Who connects: either end, at its first send or receive with that peer
// (both may, at once). The lower rank's connection is always the one: it
// sends on it at once. The higher rank first waits up to kOfferAfterMs for it
// (in a collective both ends start together, and it comes within that), then
// connects too, as an offer. The lower rank takes the offer only if it arrives
// before the lower rank touched the pair itself, and then writes one byte
// (kTaken) on it. The higher rank moves nothing on its offer until it reads
// that byte. If the lower rank's own connection arrives first, the higher rank
// uses that one and closes its offer, on which the lower rank never wrote or
// read (and which it closes on arrival: Bootstrap::refuseArrivals). Both ends
// thus agree on a single byte stream, without a round trip for the lower rank.
// A look for a send from any source
// (tryPeek) takes only what has arrived. It never connects, so a receive from
// any source does not connect to every peer.
//
// A peer that died is found as with connections made at init: its listener is
// gone (the connect is refused at once), or the connection ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.h"
#include "transports/channel.h"
#include "transports/tcp/stand_in_channel.h"

namespace weft {

class TcpChannel;

class LazyConnection {
 public:
  // `conn` receives the connection once both ends agree on it (and `offer` the
  // higher rank's offer meanwhile): the transport's slots, which its
  // shutdownAll and destructor see. `ready` prepares a connection for data
  // (congestion control, kept from forked children).
  LazyConnection(Bootstrap* bs, int peer, uint32_t tag, std::atomic<int>* conn,
                 std::atomic<int>* offer, size_t spliceMin, std::function<weftResult_t(int)> ready);
  ~LazyConnection();
  LazyConnection(const LazyConnection&) = delete;
  LazyConnection& operator=(const LazyConnection&) = delete;

  Channel* sendChannel() { return &send_; }
  Channel* recvChannel() { return &recv_; }

 private:
  // The byte the lower rank writes on the higher rank's offer to take it.
  static constexpr uint8_t kTaken = 0x5a;
  // How long the higher rank waits for the lower rank's connection before it
  // offers one: past it, the lower rank is busy elsewhere (a point-to-point
  // send it has not posted the receive of yet), and an offer is taken later.
  static constexpr int kOfferAfterMs = 10;
  // Moves toward an agreed connection: takes what arrived and, if `open`,
  // connects or offers where nothing did. *agreed once there is one.
  weftResult_t advance(bool open, bool* agreed);
  weftResult_t agree(int fd);
  weftResult_t readTaken(bool* agreed);
  ChannelWake waitWake() const;
  bool makeWaitSet(int listener, int offer);
  void stopWaiting();  // closes the wait set and the timer

  // One direction of the connection, as the engine sees it.
  class End : public StandInChannel {
   public:
    End(LazyConnection* c, bool send) : c_(c), send_(send) {}
    const std::string& peerName() const override { return c_->name_; }

   private:
    weftResult_t target(bool open, Channel** out) override;
    Channel* opened() const override;
    ChannelWake waitWake() const override { return c_->waitWake(); }
    bool lookOpens() const override { return false; }  // a look connects nowhere
    LazyConnection* c_;
    bool send_;
  };

  Bootstrap* bs_;
  int peer_;
  uint32_t tag_;
  bool lower_;  // this rank is the lower of the pair
  std::string name_;
  std::atomic<int>* conn_;
  std::atomic<int>* offer_;
  size_t spliceMin_;
  std::function<weftResult_t(int)> ready_;
  std::unique_ptr<TcpChannel> out_, in_;  // on the agreed connection
  int wait_ = -1;   // epoll set of the listener and the offer or the timer (the higher rank's wait)
  int timer_ = -1;  // timerfd: fires when the higher rank may offer
  int64_t offerAtNs_ = -1;  // CLOCK_MONOTONIC; -1: not touched yet
  End send_{this, true}, recv_{this, false};
};

}  // namespace weft
