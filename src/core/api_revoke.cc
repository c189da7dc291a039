// weftCommRevoke: stops a communicator's calls without freeing it, so that the
// survivors of a failure can still shrink it (NCCL's ncclCommRevoke).
//
// Calls in flight wait in loops that watch `aborted` (and TCP waits wake on
// the shutdown that markBroken does). Revoke breaks the communicator first,
// so that nothing started later can succeed, then raises `aborted` long
// enough for every loop to see it (they look at least every 100 ms) and for
// the API calls inside to leave, then lowers it again: shrink and destroy
// refuse an aborted communicator, and shrink's bootstrap waits watch the flag.
#include <unistd.h>

#include <string>

#include "base/error.h"
#include "core/comm.h"

using namespace weft;

extern "C" weftResult_t weftCommRevoke(weftComm_t comm) {
  clearError();
  CommCall guard(comm, "weftCommRevoke", /*exclusive=*/false);
  WEFT_CHECK(guard.status());
  comm->markBroken(weftInvalidUsage, "rank " + std::to_string(comm->rank) +
                                         ": the communicator was revoked "
                                         "(weftCommRevoke)");
  comm->aborted.store(true);
  usleep(200 * 1000);
  // Our own guard counts as one call; others get 5 s to leave (a wedged one
  // is left behind rather than waited for without bound).
  for (int i = 0; i < 5000 && comm->activeCalls.load() > 1; ++i) usleep(1000);
  comm->aborted.store(false);
  return weftSuccess;
}
