// Calls on a stream, one at a time (stream_call.h): an allreduce on the GPU
// ring (device_ring.h), or one communicator's part (stream_part.h), prepared,
// enqueued and submitted at once.
#include "device/stream_call.h"

#include "base/error.h"
#include "core/algo_table.h"
#include "core/comm.h"
#include "device/device_ring.h"
#include "device/stream_part.h"

namespace weft {

weftResult_t enqueueOnStream(weftComm* comm, const char* fn, const std::vector<Call>& calls,
                             weftStream_t stream) {
  WEFT_CHECK(refuseIfBroken(comm, fn));
  // A call alone may run on the GPU ring (device_ring.h): the table's GPU-ring row.
  const bool ring = calls.size() == 1 && selectGpuRing(comm, calls[0]);
  weftResult_t r = weftSuccess;
  if (ring) {
    r = enqueueRingCall(comm, calls[0]);
    if (r == weftSuccess) return weftSuccess;
  }
  StreamPart part;
  if (!ring) r = prepareStreamPart(comm, calls, stream, &part);
  if (!ring && r == weftSuccess) r = enqueueStreamPart(&part);
  if (r != weftSuccess) {
    // Peers will run these calls and we will not: the communicator is broken
    // (they learn at once).
    std::string text = std::string(fn) + ": could not enqueue on the stream: " + lastError();
    comm->markBroken(r, "rank " + std::to_string(comm->rank) + ": " + text);
    return setErrorString(r, text);
  }
  submitStreamPart(&part);
  return weftSuccess;
}

}  // namespace weft
