// The channel table a communicator hands its collectives: for each peer, the
// best transport that reaches it (shared memory on the same node, else verbs
// when every rank has an RDMA device, else TCP), in that
// preference order. A table made for headers asks TCP for its small-call channels
// whatever the call's mode (tcp_transport.h: call headers always share one
// connection per stream).
#pragma once

#include "transports/channel.h"
#include "transports/ib/ib_available.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {

class PeerChannels : public ChannelTable {
 public:
  PeerChannels(TcpTransport* tcp, ShmTransport* shm, IbTransport* ib, bool headers = false)
      : tcp_(tcp), shm_(shm), ib_(ib), headers_(headers) {}
  Channel* sendChannel(int peer, int stream) override {
    if (shm_ && shm_->reaches(peer)) return shm_->sendChannel(peer, stream);
    if (ib_ && ib_->reaches(peer)) return ib_->sendChannel(peer, stream);
    return headers_ ? tcp_->sendChannelSmall(peer, stream) : tcp_->sendChannel(peer, stream);
  }
  Channel* recvChannel(int peer, int stream) override {
    if (shm_ && shm_->reaches(peer)) return shm_->recvChannel(peer, stream);
    if (ib_ && ib_->reaches(peer)) return ib_->recvChannel(peer, stream);
    return headers_ ? tcp_->recvChannelSmall(peer, stream) : tcp_->recvChannel(peer, stream);
  }
  int nstreams() const override { return tcp_->nstreams(); }
  Doorbell* doorbell() override { return shm_ ? shm_->doorbell() : nullptr; }

 private:
  TcpTransport* tcp_;
  ShmTransport* shm_;
  IbTransport* ib_;
  bool headers_;
};

}  // namespace weft
