// The registry of transports (transport_setup.h): one line per transport.
#include <algorithm>
#include <utility>

#include "base/error.h"
#include "transports/ib/ib_available.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport_setup.h"

namespace weft {
namespace {

struct TransportKind {
  const char* name;
  int preference;  // the channel table's order: lower first
  TransportSetUp setUp;
};

// In set-up order: TCP first, as the others use its connections.
const TransportKind kTransports[] = {
    {"tcp", 2, setUpTcpTransport},
    {"shm", 0, setUpShmTransport},
#ifdef WEFT_HAVE_VERBS
    {"verbs", 1, setUpIbTransport},
#endif
};

}  // namespace

weftResult_t setUpTransports(Bootstrap& bootstrap, const std::vector<RankPlace>& places,
                             const TransportOptions& options,
                             std::vector<std::unique_ptr<Transport>>* owned,
                             std::vector<Transport*>* preferred) {
  const int nranks = bootstrap.nranks();
  TransportSetup setup{bootstrap, places, options, nullptr, {}};
  std::vector<std::pair<int, Transport*>> ranked;  // (preference, transport)
  for (const TransportKind& kind : kTransports) {
    setup.taken.assign(nranks, false);
    for (const auto& [preference, t] : ranked)
      for (int p = 0; p < nranks && preference < kind.preference; ++p)
        if (t->reaches(p)) setup.taken[p] = true;
    std::unique_ptr<Transport> made;
    WEFT_CHECK(kind.setUp(setup, &made));
    if (made == nullptr) continue;
    ranked.emplace_back(kind.preference, made.get());
    owned->push_back(std::move(made));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [preference, t] : ranked) preferred->push_back(t);
  return weftSuccess;
}

}  // namespace weft
