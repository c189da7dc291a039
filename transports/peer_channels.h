// The channel table a communicator hands its collectives: for each peer, the
// best transport that reaches it (shared memory on the same node, else TCP),
// per DESIGN.md's selection order.
#pragma once

#include "transports/channel.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {

class PeerChannels : public ChannelTable {
 public:
  PeerChannels(TcpTransport* tcp, ShmTransport* shm) : tcp_(tcp), shm_(shm) {}
  Channel* sendChannel(int peer, int stream) override {
    return shm_ && shm_->reaches(peer) ? shm_->sendChannel(peer, stream)
                                       : tcp_->sendChannel(peer, stream);
  }
  Channel* recvChannel(int peer, int stream) override {
    return shm_ && shm_->reaches(peer) ? shm_->recvChannel(peer, stream)
                                       : tcp_->recvChannel(peer, stream);
  }
  int nstreams() const override { return tcp_->nstreams(); }
  Doorbell* doorbell() override { return shm_ ? shm_->doorbell() : nullptr; }

 private:
  TcpTransport* tcp_;
  ShmTransport* shm_;
};

}  // namespace weft
