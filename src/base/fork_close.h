// Descriptors that a child forked without exec closes at once (a data
// loader's workers, a subprocess before its exec). A peer learns that this
// process died from the end of file on its connections, which the kernel
// sends only when the last copy of each closes: a child that keeps its copies
// open hides the death until the child exits or the peers time out.
//
// The registry is lock-free (atomic slots), so the fork handler, which runs in
// the child and may only do async-signal-safe work, can walk it. Remove a
// descriptor (keepInForkedChildren) before closing it: a slot still naming a
// closed descriptor would make a later child close whatever reused its number.
#pragma once

namespace weft {

// Registers `fd`; the first call installs the fork handler. A full registry
// (over a million descriptors) leaves `fd` open in children.
void closeInForkedChildren(int fd);
// Unregisters `fd` (no effect if it was not registered).
void keepInForkedChildren(int fd);
// Descriptors registered now (tests).
int forkClosedCount();

}  // namespace weft
