// The IP address a rank's rdma_cm listener binds to (WEFT_IB_RDMACM=1,
// ib_cm_connect.h): rdma_cm connects IP addresses, not GIDs. On RoCE it is
// the address of the GID weft picked (ib_cm_wire.h: gidToSockaddr); on
// InfiniBand the GID is no IP, so it is the address of the port's IPoIB
// interface, found by the port GID inside the interface's 20-byte hardware
// address. Split from the connector so that the choice reads in one place.
#pragma once

#include <netinet/in.h>

#include "transports/ib/ib_device.h"
#include "weft/weft.h"

namespace weft {

// Our rdma_cm address (port 0), or an error saying to configure an address
// or unset WEFT_IB_RDMACM.
weftResult_t cmLocalAddress(const IbDevice& dev, sockaddr_storage* out);

}  // namespace weft
