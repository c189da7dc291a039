// What the TCP transport is set up with (tcp_transport.h); apart from it so
// that the transport registry's options (transport_setup.h) can hold it.
#pragma once

#include <cstddef>
#include <string>

namespace weft {

// How TcpTransport::connectAll builds the mesh.
struct TcpOptions {
  int nstreams = 1;      // WEFT_SOCKET_NSTREAMS
  size_t spliceMin = 0;  // WEFT_SOCKET_SPLICE: the smallest send passed by reference (0: never)
  // Open connections B and C of every stream, each as `lanes` connections
  // (WEFT_SOCKET_PER_DIRECTION > 0, WEFT_SOCKET_LANES, transports/striped_channel.h).
  bool perDirection = true;
  int lanes = 1;
  // Collectives of at least this many bytes per rank run in bulk mode
  // (beginCall); 0: never.
  size_t bulkMin = 0;
  // WEFT_SOCKET_CONGESTION (tcp_congestion.h); readCommConfig has checked it,
  // so a bad name fails init before any connection is made.
  std::string congestion = "system";
  // Connection A to a peer of another node on first use (WEFT_RUNTIME_CONNECT),
  // not at init.
  bool onUse = true;
};

}  // namespace weft
