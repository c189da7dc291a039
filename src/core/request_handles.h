// The requests handed to the user (weft*Async, weftGroupEndAsync) that have
// not yet been completed through weftTest or weftWait. A request is freed when
// it completes, so a handle the user copied and completes twice, one that two
// threads complete at once, or a pointer that never came from weft would
// otherwise be freed twice or read after free. weftTest and weftWait look the
// handle up here first and refuse it with a sentence if it is not outstanding.
// Like MPI, this cannot tell a stale handle from a newer request that the
// allocator placed at the same address.
#pragma once

#include "core/request.h"

namespace weft {

// Records `req` as outstanding and returns it (the pointer given to the user).
weftRequest* handOutRequest(weftRequest* req);

enum class HandleState { kUnknown, kRunning, kTaken };
// weftTest's look-up: kUnknown if `req` is not outstanding; else kRunning if it
// has not finished, or kTaken if it has, in which case it is no longer
// outstanding and the caller must finish it. One critical section, so that no
// other thread can free `req` between the look-up and the check.
HandleState testRequestHandle(weftRequest* req);
// weftWait's look-up: true (and no longer outstanding: the caller now owns it)
// if `req` was outstanding.
bool takeRequestHandle(weftRequest* req);

}  // namespace weft
