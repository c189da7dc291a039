// Shared-memory transport between the ranks of one node (same node identity,
// see src/topo/node_id.h). Each rank owns one segment holding its doorbell and
// one receive FIFO per local peer and stream; senders map it and write across.
// The TCP connection to each local peer stays open, carrying no data, so that
// a peer's death is seen at once (EOF) rather than after WEFT_TIMEOUT.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/shm_channel.h"
#include "transports/shm/shm_segment.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {

class ShmTransport {
 public:
  // Collective over the bootstrap. `tcp` supplies the death-watch sockets.
  weftResult_t setup(Bootstrap& bs, TcpTransport& tcp, int nstreams, size_t fifoBytes);
  bool reaches(int peer) const { return peer < static_cast<int>(local_.size()) && local_[peer]; }
  Channel* sendChannel(int peer, int stream) { return send_[peer][stream].get(); }
  Channel* recvChannel(int peer, int stream) { return recv_[peer][stream].get(); }
  Doorbell* doorbell() { return bell_; }
  int localRanks() const { return nlocal_; }

 private:
  std::vector<bool> local_;  // [rank]: same node as us
  int nlocal_ = 0;
  ShmSegment mine_;
  std::vector<std::unique_ptr<ShmSegment>> peers_;  // [rank]
  Doorbell* bell_ = nullptr;
  std::vector<std::vector<std::unique_ptr<ShmChannel>>> send_, recv_;
};

}  // namespace weft
