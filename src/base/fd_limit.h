// Descriptor budget. A job of N ranks holds about N sockets in every rank
// (the TCP mesh: one per peer and stream from init, and two sets of lanes to the peers that
// large calls use) and N at the rendezvous root, while Linux's default soft RLIMIT_NOFILE is 1024
// and the hard limit is usually far higher. So before opening them weft raises the soft limit as
// far as the job needs (never past the hard limit, never down), as Go's runtime does for every
// program. Where even the hard limit is too low it fails at once, with a sentence saying how many
// descriptors are needed, instead of an EMFILE deep inside a connect or accept (at the root that
// looked like ranks that "never arrived", after WEFT_TIMEOUT).
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

constexpr size_t kCountOpenFds = ~static_cast<size_t>(0);
// Makes room for `want` more descriptors beyond those open now, raising the
// soft limit as far as the hard one allows; fails (weftSystemError, the
// sentence starting with `who`, e.g. "a rank of a 2000-rank job") only when
// fewer than `need` (<= want: what is sure to be opened) can fit. `openBefore`:
// the count to add to, where some of those `need` are open already (the
// rendezvous root learns the job's size from a connection it holds); by
// default openFdCount(). Thread-safe.
weftResult_t ensureFdRoom(size_t need, size_t want, const char* who,
                          size_t openBefore = kCountOpenFds);
// Descriptors this process has open (from /proc/self/fd; 0 where unreadable).
size_t openFdCount();
// A rank's sockets to its peers (the TCP mesh): per peer and stream, one, and
// `bulkLanes` more each way for large calls (0: none).
size_t meshSockets(int nranks, int nstreams, int bulkLanes);
// What a rank opens in all beyond the mesh's: the bootstrap's ring and
// listener, connections waiting in its gate, memfds, eventfds, a verbs device.
constexpr size_t kFdsBesideMesh = 64;

}  // namespace weft
