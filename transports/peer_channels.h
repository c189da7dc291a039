// The channel table a communicator hands its collectives: for each peer, the
// first transport of the preference order that reaches it (shared memory on
// the same node, else verbs when every rank has an RDMA device, else TCP,
// which reaches every peer). A table made for headers asks each transport for
// its header channels (TCP: its small-call connection whatever the call's
// mode, tcp_transport.h).
#pragma once

#include <vector>

#include "transports/channel.h"
#include "transports/transport.h"

namespace weft {

class PeerChannels : public ChannelTable {
 public:
  // `order`: the transports that are set up, most preferred first; the last
  // must reach every peer. `doorbell`: shared memory's (nullptr without).
  // reaches() is settled at setup, so each peer's transport is looked up once.
  PeerChannels(const std::vector<Transport*>& order, int nranks, int nstreams, Doorbell* doorbell,
               bool headers = false)
      : order_(order),
        byPeer_(nranks, order.back()),
        nstreams_(nstreams),
        doorbell_(doorbell),
        headers_(headers) {
    for (int p = 0; p < nranks; ++p) {
      for (Transport* t : order) {
        if (t->reaches(p)) {
          byPeer_[p] = t;
          break;
        }
      }
    }
  }
  Channel* sendChannel(int peer, int stream) override {
    Transport* t = byPeer_[peer];
    return headers_ ? t->headerSendChannel(peer, stream) : t->sendChannel(peer, stream);
  }
  Channel* recvChannel(int peer, int stream) override {
    Transport* t = byPeer_[peer];
    return headers_ ? t->headerRecvChannel(peer, stream) : t->recvChannel(peer, stream);
  }
  int nstreams() const override { return nstreams_; }
  Doorbell* doorbell() override { return doorbell_; }
  void setWide(bool wide) override {
    for (Transport* t : order_) t->setWide(wide);
  }
  Transport* transportTo(int peer) const { return byPeer_[peer]; }

 private:
  std::vector<Transport*> order_;
  std::vector<Transport*> byPeer_;
  int nstreams_;
  Doorbell* doorbell_;
  bool headers_;
};

}  // namespace weft
