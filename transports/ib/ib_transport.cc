// See ib_transport.h.
#include "transports/ib/ib_transport.h"

#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "topo/node_id.h"

namespace weft {

weftResult_t IbTransport::setup(Bootstrap& bs, TcpTransport& tcp, const std::vector<bool>& wanted,
                                int nstreams, size_t ringBytes, bool* usable) {
  const int n = bs.nranks(), me = bs.rank();
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
  const size_t per = static_cast<size_t>(n) * nstreams;
  std::vector<IbEndpoint> table(static_cast<size_t>(n) * per);  // [rank][peer][stream]
  conns_.clear();
  conns_.resize(n);
  for (int p = 0; p < n; ++p) {
    if (p == me || !wanted[p]) continue;
    for (int s = 0; s < nstreams; ++s) {
      conns_[p].push_back(
          std::make_unique<IbConnection>(&dev_, bs.peerName(p), ringBytes, tcp.socketFd(p, s)));
      WEFT_CHECK(conns_[p][s]->create(&table[me * per + p * nstreams + s]));
    }
  }
  WEFT_CHECK(bs.allgather(table.data(), per * sizeof(IbEndpoint)));
  for (int p = 0; p < n; ++p)
    for (int s = 0; s < static_cast<int>(conns_[p].size()); ++s)
      WEFT_CHECK(conns_[p][s]->connect(table[p * per + me * nstreams + s]));
  // No rank may send before its peer's QP is ready to receive.
  WEFT_CHECK(bs.barrier());
  *usable = true;
  WEFT_INFO(NET, "rank %d: verbs on %s, %d QP(s) per peer, %zu-byte rings", me,
            dev_.describe().c_str(), nstreams, ringBytes);
  WEFT_INFO(NET, "rank %d: %s chosen: %s%s%s", me, dev_.name().c_str(), dev_.choiceReason().c_str(),
            dev_.nearCpus().empty() ? "" : "; CPUs near it: ", dev_.nearCpus().c_str());
  return weftSuccess;
}

}  // namespace weft
