// InfiniBand/RoCE transport: WEFT_IB_QPS_PER_CONNECTION RC queue pairs per
// (peer, stream), one stream striped over them (transports/striped_channel.h), set up
// through the bootstrap's allgather of endpoints (QPN, PSN, GID/LID, ring
// address and rkey, credit word), or with WEFT_IB_RDMACM=1 through librdmacm
// (ib_cm_connect.h; the allgather then carries each rank's rdma_cm listener
// instead of QP numbers). Used for peers that shared memory does not reach,
// when a verbs device with an active port exists and WEFT_IB_DISABLE is not
// set; otherwise the communicator keeps TCP, with one INFO line saying why.
#pragma once

#include <memory>
#include <vector>

#include "base/config.h"
#include "bootstrap/bootstrap.h"
#include "topo/rank_place.h"
#include "transports/channel.h"
#include "transports/ib/ib_cm_connect.h"
#include "transports/ib/ib_connection.h"
#include "transports/ib/ib_device.h"
#include "transports/ib/ib_memory.h"
#include "transports/ib/ib_options.h"
#include "transports/ib/reg_cache.h"
#include "transports/striped_channel.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport.h"
#include "transports/transport_setup.h"

namespace weft {

class IbTransport : public Transport {
 public:
  ~IbTransport() override;
  const char* name() const override { return "verbs"; }
  // `wanted[p]`: connect to peer p. On success *usable tells whether verbs are
  // in use (false: no device; not an error).
  // `places` (topo/rank_place.h) gives our index among our node's ranks.
  weftResult_t setup(Bootstrap& bs, TcpTransport& tcp, const std::vector<RankPlace>& places,
                     const std::vector<bool>& wanted, const IbOptions& opt, bool* usable);
  bool reaches(int peer) const override {
    return peer < static_cast<int>(conns_.size()) && !conns_[peer].empty();
  }
  Channel* sendChannel(int peer, int stream) override { return send_[peer][stream]; }
  Channel* recvChannel(int peer, int stream) override { return recv_[peer][stream]; }
  const IbDevice& device() const { return dev_; }
  // FIFO memory registration and the GDR flush, for the GPU ring's proxy
  // (nullptr until verbs are in use).
  RdmaMemory* rdma() { return memory_.get(); }
  // The end of an API call (or group): user buffers may be freed from now on,
  // so their registrations go, unless WEFT_IB_REG_PERSIST=1.
  void endCalls() override {
    if (cache_ != nullptr && !persist_) cache_->flush();
  }

 private:
  // Destroyed in reverse: channels, QPs (releasing their cache pins; with
  // rdma_cm their ids too), the rdma_cm listener and event channel, the cache
  // (deregistering every user buffer), the flush QP, then the device's PD.
  IbDevice dev_;
  std::unique_ptr<IbMemory> memory_;  // its regions belong to the GPU ring, closed before us
  std::unique_ptr<RegCache> cache_;
  std::unique_ptr<IbCmConnector> cm_;  // WEFT_IB_RDMACM=1 only
  bool persist_ = false;
  std::vector<std::vector<std::unique_ptr<IbConnection>>> conns_;  // [peer][stream * qps + qp]
  // [peer][stream]: the stream's one QP, or a StripedChannel over its QPs.
  std::vector<std::vector<Channel*>> send_, recv_;
  std::vector<std::unique_ptr<StripedChannel>> striped_;

  // setup's steps: every rank's verdict on verbs (*all: every rank has a
  // device), the registration cache, our QPs and their endpoints in `mine`
  // ([peer][stream][qp]), each peer's for us over the pair's connection A
  // into `theirs` (same layout), then connecting ours to theirs.
  weftResult_t agreeOnVerbs(Bootstrap& bs, const std::vector<RankPlace>& places,
                            const IbOptions& opt, bool* all);
  void createRegCache(const IbOptions& opt);
  // The QPs, their endpoints exchanged, connected (setup's rest, once the
  // ring size is fitted to the job).
  weftResult_t connectAll(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                          const IbOptions& opt, bool* usable);
  weftResult_t createQps(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                         const IbOptions& opt, std::vector<IbEndpoint>* mine);
  weftResult_t exchangeEndpoints(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                                 const IbOptions& opt, const std::vector<IbEndpoint>& mine,
                                 std::vector<IbEndpoint>* theirs);
  weftResult_t connectQps(Bootstrap& bs, const IbOptions& opt,
                          const std::vector<IbEndpoint>& theirs);
};

// The registry's set-up (transport_setup.h): connects to the peers no
// preferred transport took; not made with one rank, with WEFT_IB_DISABLE, when
// some rank has no usable device, or when it would reach no peer. Every rank
// takes part in the verdict, even one whose peers are all taken.
weftResult_t setUpIbTransport(TransportSetup& setup, std::unique_ptr<Transport>* made);

}  // namespace weft
