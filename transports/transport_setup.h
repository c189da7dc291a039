// How transports come to be: the options every transport is set up with, what
// a transport's set-up function receives, and the registry
// (transport_registry.cc) that sets each one up from the bootstrap at
// communicator init and orders them for the channel table.
//
// Adding a transport: its folder, a set-up function of the TransportSetUp
// shape declared in its header, and one line in the registry. A set-up
// function is collective: every rank calls it, in registry order, even a rank
// that will not use the transport, and every rank reaches the same verdict
// (made, or not used in this communicator: *made left empty).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "topo/rank_place.h"
#include "transports/ib/ib_options.h"
#include "transports/tcp/tcp_options.h"
#include "transports/transport.h"

namespace weft {

class TcpTransport;

struct TransportOptions {
  TcpOptions tcp;                 // tcp.nstreams is every transport's stream count
  bool shmEnabled = true;         // WEFT_SHM_DISABLE unset
  size_t shmFifoBytes = 2 << 20;  // WEFT_SHM_FIFO
  bool shmFifoSet = false;        // given: used as is, not fitted to the node
  bool ibEnabled = true;          // WEFT_IB_DISABLE unset
  IbOptions ib;
};

struct TransportSetup {
  Bootstrap& bootstrap;
  const std::vector<RankPlace>& places;  // every rank's node (topo/rank_place.h)
  const TransportOptions& options;
  // TCP, set up first and reaching every peer: the others watch their peers'
  // deaths on its connections (a socket's end of file comes at once).
  TcpTransport* tcp = nullptr;
  // [peer]: reached by a transport set up earlier that the channel table
  // prefers to this one (a transport need not connect there).
  std::vector<bool> taken;
};

using TransportSetUp = weftResult_t (*)(TransportSetup& setup, std::unique_ptr<Transport>* made);

// Sets every registered transport up, in registry order. `*owned` gets them
// in that order (destroy them last first); `*preferred` the same transports
// in the channel table's order (peer_channels.h), TCP last.
weftResult_t setUpTransports(Bootstrap& bootstrap, const std::vector<RankPlace>& places,
                             const TransportOptions& options,
                             std::vector<std::unique_ptr<Transport>>* owned,
                             std::vector<Transport*>* preferred);

}  // namespace weft
