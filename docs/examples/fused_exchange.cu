// Example of weft's device-side channel API: a user kernel that fuses its own
// computation with communication. Block 0 computes y = 2x piece by piece and
// puts each piece straight into the channel's slot (no staging buffer), then
// signals; block 1 (standing in for the peer rank) waits for each piece and
// consumes it, adding it to its own accumulator. With two processes the
// channel's slots live in the receiver's memory, mapped by weft's transports;
// the kernel code is the same. Built in CI as a compile check.
#include <cuda_runtime.h>

#include "weft/device/channel.h"

__global__ void scaleAndSend(const float* x, float* acc, size_t n, weft::dev::Channel ch) {
  __shared__ int shared;
  const weft::dev::BlockLanes lanes;
  const size_t piece = ch.slotBytes / sizeof(float);
  uint64_t k = 0;
  for (size_t at = 0; at < n; at += piece, ++k) {
    const size_t len = n - at < piece ? n - at : piece;
    if (blockIdx.x == 0) {  // producer: compute into the slot, then signal
      if (!weft::dev::waitCredit(ch, k, lanes, &shared)) return;  // aborted
      float* slot = reinterpret_cast<float*>(weft::dev::slotOf(ch, k));
      for (size_t i = lanes.index(); i < len; i += lanes.count()) slot[i] = 2.0f * x[at + i];
      weft::dev::post(ch, k, len * sizeof(float), lanes);
    } else {  // consumer: wait, use the data in place, give the slot back
      uint64_t bytes = 0;
      if (!weft::dev::waitData(ch, k, lanes, &shared, &bytes)) return;
      const float* slot = reinterpret_cast<const float*>(weft::dev::slotOf(ch, k));
      for (size_t i = lanes.index(); i < bytes / sizeof(float); i += lanes.count())
        acc[at + i] += slot[i];
      weft::dev::consume(ch, k, lanes);
    }
  }
}
