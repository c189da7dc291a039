// See ib_transport.h.
#include "transports/ib/ib_transport.h"

#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "base/wait.h"
#include "bootstrap/socket.h"
#include "topo/rank_place.h"

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
  striped_.clear();
  conns_.clear();  // before the cache: connections release their pins
  cm_.reset();     // after the connections: their rdma_cm ids use its event channel
  cache_.reset();
}

weftResult_t IbTransport::agreeOnVerbs(Bootstrap& bs, const std::vector<RankPlace>& places,
                                       const IbOptions& opt, bool* all) {
  const int n = bs.nranks(), me = bs.rank();
  // Our index among our node's ranks, so that ranks of a node spread over
  // equally near devices.
  int localIndex = 0, localRanks = 0;
  localIndexOf(places, me, &localIndex, &localRanks);
  weftResult_t mine = dev_.open(localIndex, localRanks, opt.rdmacm);
  if (mine == weftSuccess && dev_.ok() && opt.rdmacm) {
    cm_ = std::make_unique<IbCmConnector>(&dev_, me, opt.timeoutSec);
    mine = cm_->listen();
  }
  const std::string myError = mine == weftSuccess ? "" : lastError();
  // Every rank must agree on whether verbs are used, and how they connect, or
  // the two ends of a pair would not meet: allgather each rank's verdict
  // (0: no device, 1: verbs, 2: verbs through rdma_cm, -1: failed), so that a
  // rank that failed here fails everyone at once instead of leaving them waiting.
  std::vector<int> ok(n, 0);
  ok[me] = mine != weftSuccess ? -1 : !dev_.ok() ? 0 : opt.rdmacm ? 2 : 1;
  WEFT_CHECK(bs.allgather(ok.data(), sizeof(int)));
  if (mine != weftSuccess) return setErrorString(mine, myError);
  for (int r = 0; r < n; ++r)
    if (ok[r] < 0)
      return setError(weftRemoteError, "%s could not set up its verbs device (its log says why)",
                      bs.peerName(r).c_str());
  *all = true;
  for (int v : ok) *all = *all && v != 0;
  if (!*all) {
    WEFT_INFO(NET, "rank %d: verbs not used (%s)", me,
              dev_.ok() ? "another rank has no RDMA device" : dev_.whyNot().c_str());
    return weftSuccess;
  }
  for (int r = 0; r < n; ++r)
    if (ok[r] != ok[me])
      return setError(weftInvalidUsage,
                      "WEFT_IB_RDMACM is %d here but %d on %s: set it alike on every rank",
                      ok[me] - 1, ok[r] - 1, bs.peerName(r).c_str());
  return weftSuccess;
}

// User buffers for zero-copy, registered on first use for read and remote
// write (a buffer that cannot be, read-only memory say, is copied instead).
void IbTransport::createRegCache(const IbOptions& opt) {
  RegCache::Ops ops;
  ibv_pd* pd = dev_.pd();
  ops.reg = [pd](uintptr_t start, size_t bytes) -> void* {
    return ibv_reg_mr(pd, reinterpret_cast<void*>(start), bytes,
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  };
  ops.dereg = [](void* mr) { ibv_dereg_mr(static_cast<ibv_mr*>(mr)); };
  cache_ = std::make_unique<RegCache>(std::move(ops), opt.regCacheBytes);
  persist_ = opt.regPersist;
}

weftResult_t IbTransport::createQps(Bootstrap& bs, TcpTransport& tcp,
                                    const std::vector<bool>& wanted, const IbOptions& opt,
                                    std::vector<IbEndpoint>* mine) {
  const int n = bs.nranks(), me = bs.rank();
  const int nstreams = opt.nstreams, qpsPerStream = opt.qpsPerStream;
  const int perPeer = nstreams * qpsPerStream;  // QPs to each peer, stream-major
  mine->assign(static_cast<size_t>(n) * perPeer, IbEndpoint{});
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
        IbEndpoint* ep = &(*mine)[static_cast<size_t>(p) * perPeer + s * qpsPerStream + q];
        if (cm_ == nullptr) {
          WEFT_CHECK(qps.back()->create(ep));
          continue;
        }
        WEFT_CHECK(qps.back()->createBuffers(ep));  // the QP comes with its rdma_cm id
        cm_->describe(ep);
      }
      if (qps.size() == 1) {  // the QP is the channel both ways
        send_[p].push_back(qps[0]);
        recv_[p].push_back(qps[0]);
        continue;
      }
      const std::vector<Channel*> lanes(qps.begin(), qps.end());
      striped_.push_back(std::make_unique<StripedChannel>(lanes));
      send_[p].push_back(striped_.back().get());
      striped_.push_back(std::make_unique<StripedChannel>(lanes));
      recv_[p].push_back(striped_.back().get());
    }
  }
  return weftSuccess;
}

// Each rank needs only what its peers made for it: perPeer endpoints from
// each, sent over the pair's connection A (up since connectNow), O(n) bytes
// per rank, where an allgather of every rank's row would hold n^2 (about
// 23 MB per rank at 512 ranks, 88 bytes each). Small: all sends fit the
// sockets' buffers, so every rank sends first and then reads.
weftResult_t IbTransport::exchangeEndpoints(Bootstrap& bs, TcpTransport& tcp,
                                            const std::vector<bool>& wanted, const IbOptions& opt,
                                            const std::vector<IbEndpoint>& mine,
                                            std::vector<IbEndpoint>* theirs) {
  const int n = bs.nranks();
  const size_t perPeer = static_cast<size_t>(opt.nstreams) * opt.qpsPerStream;
  const size_t bytes = perPeer * sizeof(IbEndpoint);
  theirs->assign(static_cast<size_t>(n) * perPeer, IbEndpoint{});
  const Deadline deadline = Deadline::after(opt.timeoutSec);
  for (int p = 0; p < n; ++p)
    if (wanted[p])
      WEFT_CHECK(sendAll(tcp.socketFd(p, 0), &mine[p * perPeer], bytes, deadline, nullptr,
                         bs.peerName(p).c_str()));
  for (int p = 0; p < n; ++p)
    if (wanted[p])
      WEFT_CHECK(recvAll(tcp.socketFd(p, 0), &(*theirs)[p * perPeer], bytes, deadline, nullptr,
                         bs.peerName(p).c_str()));
  return weftSuccess;
}

weftResult_t IbTransport::connectQps(Bootstrap& bs, const IbOptions& opt,
                                     const std::vector<IbEndpoint>& theirs) {
  const int n = bs.nranks();
  const int perPeer = opt.nstreams * opt.qpsPerStream;
  std::vector<IbCmConnector::Target> targets;
  for (int p = 0; p < n; ++p)
    for (int i = 0; i < static_cast<int>(conns_[p].size()); ++i) {
      const IbEndpoint& remote = theirs[static_cast<size_t>(p) * perPeer + i];
      if (cm_ == nullptr) {
        WEFT_CHECK(conns_[p][i]->connect(remote));
        continue;
      }
      WEFT_CHECK(conns_[p][i]->setRemote(remote));
      IbCmConnector::Target t;
      t.peer = p;
      t.index = i;
      t.conn = conns_[p][i].get();
      t.peerName = bs.peerName(p);
      t.remote = remote;
      targets.push_back(t);
    }
  if (cm_ != nullptr) WEFT_CHECK(cm_->connectAll(targets));
  return weftSuccess;
}

weftResult_t IbTransport::setup(Bootstrap& bs, TcpTransport& tcp,
                                const std::vector<RankPlace>& places,
                                const std::vector<bool>& wanted, const IbOptions& opt,
                                bool* usable) {
  *usable = false;
  bool all = false;
  WEFT_CHECK(agreeOnVerbs(bs, places, opt, &all));
  if (!all) return weftSuccess;
  createRegCache(opt);
  IbOptions fitted = opt;
  if (!opt.ringBytesSet)
    fitted.ringBytes = fittedRingBytes(opt.ringBytes, bs.nranks(), opt.nstreams * opt.qpsPerStream);
  return connectAll(bs, tcp, wanted, fitted, usable);
}

weftResult_t IbTransport::connectAll(Bootstrap& bs, TcpTransport& tcp,
                                     const std::vector<bool>& wanted, const IbOptions& opt,
                                     bool* usable) {
  const int me = bs.rank();
  // Every QP watches its stream's connection A for the peer's death.
  WEFT_CHECK(tcp.connectNow(wanted));
  std::vector<IbEndpoint> mine, theirs;
  WEFT_CHECK(createQps(bs, tcp, wanted, opt, &mine));
  WEFT_CHECK(exchangeEndpoints(bs, tcp, wanted, opt, mine, &theirs));
  WEFT_CHECK(connectQps(bs, opt, theirs));
  // No rank may send before its peer's QP is ready to receive (with rdma_cm,
  // ESTABLISHED on our side already says so; the barrier costs little).
  WEFT_CHECK(bs.barrier());
  *usable = true;
  memory_ = std::make_unique<IbMemory>(&dev_, opt.timeoutSec);
  WEFT_INFO(NET,
            "rank %d: verbs on %s, %d stream(s) x %d QP(s) per peer, %zu-byte rings, zero-copy "
            "from %zu bytes (0: off)",
            me, dev_.describe().c_str(), opt.nstreams, opt.qpsPerStream, opt.ringBytes,
            opt.zcopyMin);
  WEFT_INFO(NET, "rank %d: %s chosen: %s%s%s", me, dev_.name().c_str(), dev_.choiceReason().c_str(),
            dev_.nearCpus().empty() ? "" : "; CPUs near it: ", dev_.nearCpus().c_str());
  return weftSuccess;
}

weftResult_t setUpIbTransport(TransportSetup& setup, std::unique_ptr<Transport>* made) {
  const int nranks = setup.bootstrap.nranks(), rank = setup.bootstrap.rank();
  if (nranks == 1 || !setup.options.ibEnabled) return weftSuccess;
  std::vector<bool> wanted(nranks, false);
  bool any = false;
  for (int p = 0; p < nranks; ++p) {
    wanted[p] = p != rank && !setup.taken[p];
    any = any || wanted[p];
  }
  auto ib = std::make_unique<IbTransport>();
  bool usable = false;
  WEFT_CHECK(
      ib->setup(setup.bootstrap, *setup.tcp, setup.places, wanted, setup.options.ib, &usable));
  if (usable && any) *made = std::move(ib);
  return weftSuccess;
}

}  // namespace weft
