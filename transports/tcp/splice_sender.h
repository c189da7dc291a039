// Sending by reference over a TCP socket: vmsplice() the caller's pages into a
// pipe, then splice() the pipe into the socket. The kernel then never copies
// the bytes on the sending side; over loopback the receiver's recv() copies
// them straight out of the sender's pages (one copy in all, not two).
//
// The contract that makes this safe is the caller's: the bytes must stay
// unchanged until the receiver has read them, because the socket holds the
// pages themselves, not a copy, and the kernel says nothing when the peer has
// read them. Collectives use it only where their schedule proves it (see
// FlowItem::stable).
//
// A send moves bytes pipe-first: whatever vmsplice() put in the pipe must go
// to the socket before anything else on the stream, so a partly sent item
// stays in the pipe and the caller must come back with the rest of the same
// buffer (the engine always does: a flow's bytes are sent in order).
#pragma once

#include <cstddef>
#include <string>

#include "weft/weft.h"

namespace weft {

class SpliceSender {
 public:
  // `fd`: a connected stream socket (made non-blocking here: splice() takes
  // its blocking mode from the socket, not from its flags).
  SpliceSender(int fd, std::string peer);
  ~SpliceSender();
  SpliceSender(const SpliceSender&) = delete;
  SpliceSender& operator=(const SpliceSender&) = delete;

  // False when this channel cannot send by reference (no pipe, or the kernel
  // refused the caller's memory once): use plain send() instead.
  bool usable() const { return usable_; }
  // Bytes vmspliced but not yet in the socket: the stream's next bytes.
  size_t pending() const { return pendingBytes_; }

  // Moves up to `bytes` from `data` into the socket without blocking and
  // without copying. *moved = 0: would block. With pending() > 0, `data` must
  // be where the pending bytes start (the rest of the same item).
  // *fallback = true (nothing moved, nothing pending): the kernel would not take
  // these pages; the caller sends them with a copy.
  weftResult_t trySend(const char* data, size_t bytes, size_t* moved, bool* fallback);

 private:
  int fd_;
  std::string peer_;
  int pipeRead_ = -1, pipeWrite_ = -1;
  size_t pipeCapacity_ = 0;
  bool usable_ = false;
  const char* pendingData_ = nullptr;  // where the pipe's bytes came from
  size_t pendingBytes_ = 0;
};

}  // namespace weft
