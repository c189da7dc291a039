// What the verbs transport is set up with (ib_transport.h); apart from it, and
// free of rdma-core's headers, so that the transport registry's options
// (transport_setup.h) hold it in every build.
#pragma once

#include <cstddef>

#include "base/config.h"

namespace weft {

struct IbOptions {
  int nstreams = 1;                   // WEFT_SOCKET_NSTREAMS
  int qpsPerStream = 1;               // WEFT_IB_QPS_PER_CONNECTION
  size_t ringBytes = 4 << 20;         // WEFT_IB_BUFFER
  size_t zcopyMin = 0;                // WEFT_IB_ZCOPY_THRESHOLD (0: off)
  size_t regCacheBytes = 1ull << 30;  // WEFT_IB_REG_CACHE
  bool regPersist = false;            // WEFT_IB_REG_PERSIST
  bool rdmacm = false;                // WEFT_IB_RDMACM
  double timeoutSec = configDefaultNumber("WEFT_TIMEOUT");
};

}  // namespace weft
