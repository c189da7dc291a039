// See ib_transport.h.
#include "transports/ib/ib_transport.h"

#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "topo/node_id.h"

namespace weft {

IbTransport::~IbTransport() {
  uint64_t bytes = 0, writes = 0;
  for (auto& peer : conns_)
    for (auto& c : peer) {
      bytes += c->zcopyBytes();
      writes += c->zcopyWrites();
    }
  if (cache_ != nullptr) {
    const RegCache::Stats st = cache_->stats();
    WEFT_INFO(NET,
              "verbs zero-copy sent %llu bytes in %llu writes; registration cache: %llu hits, "
              "%llu misses, %llu evictions, %llu failures, %zu bytes registered at the end",
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(writes),
              static_cast<unsigned long long>(st.hits), static_cast<unsigned long long>(st.misses),
              static_cast<unsigned long long>(st.evictions),
              static_cast<unsigned long long>(st.failures), cache_->registeredBytes());
  }
  send_.clear();
  recv_.clear();
  conns_.clear();  // before the cache: connections release their pins
  cache_.reset();
}

weftResult_t IbTransport::setup(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                                const IbOptions& opt, bool* usable) {
  const int n = bs.nranks(), me = bs.rank();
  const int nstreams = opt.nstreams, qpsPerStream = opt.qpsPerStream;
  *usable = false;
  // Our index among our node's ranks, so that ranks of a node spread over
  // equally near devices.
  std::vector<uint64_t> nodes(n, 0);
  nodes[me] = nodeIdentityHash();
  WEFT_CHECK(bs.allgather(nodes.data(), sizeof(uint64_t)));
  int localIndex = 0, localRanks = 0;
  for (int r = 0; r < n; ++r) {
    if (nodes[r] != nodes[me]) continue;
    if (r < me) ++localIndex;
    ++localRanks;
  }
  WEFT_CHECK(dev_.open(localIndex, localRanks));
  // Every rank must agree on whether verbs are used, or the two ends of a
  // pair would pick different transports: allgather each rank's verdict.
  std::vector<int> ok(n, 0);
  ok[me] = dev_.ok() ? 1 : 0;
  WEFT_CHECK(bs.allgather(ok.data(), sizeof(int)));
  bool all = true;
  for (int v : ok) all = all && v != 0;
  if (!all) {
    WEFT_INFO(NET, "rank %d: verbs not used (%s)", me,
              dev_.ok() ? "another rank has no RDMA device" : dev_.whyNot().c_str());
    return weftSuccess;
  }
  // User buffers for zero-copy, registered on first use for read and remote
  // write (a buffer that cannot be, read-only memory say, is copied instead).
  RegCache::Ops ops;
  ibv_pd* pd = dev_.pd();
  ops.reg = [pd](uintptr_t start, size_t bytes) -> void* {
    return ibv_reg_mr(pd, reinterpret_cast<void*>(start), bytes,
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  };
  ops.dereg = [](void* mr) { ibv_dereg_mr(static_cast<ibv_mr*>(mr)); };
  cache_ = std::make_unique<RegCache>(std::move(ops), opt.regCacheBytes);
  persist_ = opt.regPersist;
  const int perPeer = nstreams * qpsPerStream;  // QPs to each peer, stream-major
  const size_t per = static_cast<size_t>(n) * perPeer;
  std::vector<IbEndpoint> table(static_cast<size_t>(n) * per);  // [rank][peer][stream][qp]
  conns_.clear();
  conns_.resize(n);
  send_.clear();
  send_.resize(n);
  recv_.clear();
  recv_.resize(n);
  for (int p = 0; p < n; ++p) {
    if (p == me || !wanted[p]) continue;
    for (int s = 0; s < nstreams; ++s) {
      std::vector<IbConnection*> qps;
      for (int q = 0; q < qpsPerStream; ++q) {
        // Every QP of a stream watches that stream's socket for the peer's death.
        conns_[p].push_back(std::make_unique<IbConnection>(
            &dev_, bs.peerName(p), opt.ringBytes, tcp.socketFd(p, s), cache_.get(), opt.zcopyMin));
        qps.push_back(conns_[p].back().get());
        WEFT_CHECK(qps.back()->create(&table[me * per + p * perPeer + s * qpsPerStream + q]));
      }
      send_[p].push_back(std::make_unique<IbStripedChannel>(qps));
      recv_[p].push_back(std::make_unique<IbStripedChannel>(qps));
    }
  }
  WEFT_CHECK(bs.allgather(table.data(), per * sizeof(IbEndpoint)));
  for (int p = 0; p < n; ++p)
    for (int i = 0; i < static_cast<int>(conns_[p].size()); ++i)
      WEFT_CHECK(conns_[p][i]->connect(table[p * per + me * perPeer + i]));
  // No rank may send before its peer's QP is ready to receive.
  WEFT_CHECK(bs.barrier());
  *usable = true;
  WEFT_INFO(NET,
            "rank %d: verbs on %s, %d stream(s) x %d QP(s) per peer, %zu-byte rings, zero-copy "
            "from %zu bytes (0: off)",
            me, dev_.describe().c_str(), nstreams, qpsPerStream, opt.ringBytes, opt.zcopyMin);
  WEFT_INFO(NET, "rank %d: %s chosen: %s%s%s", me, dev_.name().c_str(), dev_.choiceReason().c_str(),
            dev_.nearCpus().empty() ? "" : "; CPUs near it: ", dev_.nearCpus().c_str());
  return weftSuccess;
}

}  // namespace weft
