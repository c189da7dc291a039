// What the verbs transport is set up with (ib_transport.h); apart from it, and
// free of rdma-core's headers, so that the transport registry's options
// (transport_setup.h) hold it in every build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/config.h"

namespace weft {

struct IbOptions {
  int nstreams = 1;                   // WEFT_SOCKET_NSTREAMS
  int qpsPerStream = 1;               // WEFT_IB_QPS_PER_CONNECTION
  size_t ringBytes = 4 << 20;         // WEFT_IB_BUFFER
  bool ringBytesSet = false;          // WEFT_IB_BUFFER given: used as is, not fitted to the job
  size_t zcopyMin = 0;                // WEFT_IB_ZCOPY_THRESHOLD (0: off)
  size_t regCacheBytes = 1ull << 30;  // WEFT_IB_REG_CACHE
  bool regPersist = false;            // WEFT_IB_REG_PERSIST
  bool rdmacm = false;                // WEFT_IB_RDMACM
  double timeoutSec = configDefaultNumber("WEFT_TIMEOUT");
};

// What a rank pins per peer is a ring and a staging buffer per QP, and it has
// QPs to every peer off its node: at 4 MiB each that is 4 GiB at 512 ranks.
// Left unset, WEFT_IB_BUFFER shrinks (halving, down to 256 KiB) until a
// rank's rings and staging for n - 1 peers fit kIbRingBudget. From n alone
// (not the rank's own peers off its node), so that every rank agrees: both
// ends of a QP must have the same ring.
constexpr uint64_t kIbRingBudget = 512ull << 20;
constexpr size_t kIbRingMin = 256 << 10;
inline size_t fittedRingBytes(size_t want, int nranks, int qpsPerPeer) {
  const uint64_t qps = static_cast<uint64_t>(nranks > 1 ? nranks - 1 : 1) * qpsPerPeer;
  size_t ring = want;
  while (ring > kIbRingMin && 2 * ring * qps > kIbRingBudget) ring /= 2;
  return ring < want ? ring : want;
}

}  // namespace weft
