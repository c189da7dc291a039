// InfiniBand/RoCE transport: one RC queue pair per (peer, stream), set up
// through the bootstrap's allgather of endpoints (QPN, PSN, GID/LID, ring
// address and rkey, credit word). Used for peers that shared memory does not
// reach, when a verbs device with an active port exists and WEFT_IB_DISABLE is
// not set; otherwise the communicator keeps TCP, with one INFO line saying why.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transports/channel.h"
#include "transports/ib/ib_connection.h"
#include "transports/ib/ib_device.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {

class IbTransport {
 public:
  // `wanted[p]`: connect to peer p. On success *usable tells whether verbs are
  // in use (false: no device; not an error).
  weftResult_t setup(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                     int nstreams, size_t ringBytes, bool* usable);
  bool reaches(int peer) const {
    return peer < static_cast<int>(conns_.size()) && !conns_[peer].empty();
  }
  Channel* sendChannel(int peer, int stream) { return conns_[peer][stream]->sendChannel(); }
  Channel* recvChannel(int peer, int stream) { return conns_[peer][stream]->recvChannel(); }
  const IbDevice& device() const { return dev_; }

 private:
  IbDevice dev_;
  std::vector<std::vector<std::unique_ptr<IbConnection>>> conns_;  // [peer][stream]
};

}  // namespace weft
