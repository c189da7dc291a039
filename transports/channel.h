// The channel contract as the CPU executor sees it (docs/architecture.md, "The
// transport contract"): a one-way, ordered byte stream between two ranks, progressed
// without blocking. A sender may move part of a chunk and come back; the
// receiver lands bytes in its staging slot (or straight in the user buffer)
// and consumes them in place. Credit is the transport's business: TCP gets it
// from the kernel's flow control, shared memory from head/tail counters.
#pragma once

#include <cstddef>
#include <string>

#include "weft/weft.h"

namespace weft {

struct Doorbell;  // transports/shm/doorbell.h

class Channel {
 public:
  virtual ~Channel() = default;
  // Moves up to `bytes` without blocking; *moved = 0 means "would block".
  // A closed or broken peer is weftRemoteError with a sentence naming it.
  // After *moved = 0 the caller retries with the same buffer, which the
  // transport may still be reading or writing (verbs zero-copy, ib_connection.h).
  virtual weftResult_t trySend(const void* data, size_t bytes, size_t* moved) = 0;
  virtual weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) = 0;
  // trySend for bytes that the caller guarantees stay unchanged until the
  // receiver has read them (its schedule proves it): the transport may send
  // them by reference instead of copying (TCP: splice_sender.h). A partly
  // sent buffer must be resumed where it stopped, before any other send.
  virtual weftResult_t trySendStable(const void* data, size_t bytes, size_t* moved) {
    return trySend(data, bytes, moved);
  }
  // Copies up to `bytes` of what the peer sent and this end has not read yet,
  // without consuming it: *got is what was there (0: nothing yet). A receive
  // from any source (weftRecvAny) peeks at each peer's next bytes to see who
  // sent first. A closed or broken peer is weftRemoteError, as for tryRecv.
  virtual weftResult_t tryPeek(void* data, size_t bytes, size_t* got) = 0;
  // A file descriptor to sleep on in poll() (POLLOUT for senders, POLLIN for
  // receivers), or -1 when the channel can only be polled by retrying.
  virtual int waitFd() const = 0;
  virtual const std::string& peerName() const = 0;
  // True when progress is signalled through the rank's doorbell (shared
  // memory) rather than waitFd(); waitFd() then only reports the peer's death.
  virtual bool usesDoorbell() const { return false; }
  // For doorbell channels: weftRemoteError when waitFd() became readable
  // because the peer is gone, else weftSuccess.
  virtual weftResult_t peerGone() const { return weftSuccess; }
  // One-sided write (verbs only): `bytes` from local registered memory
  // (lkey) to the peer's (remoteAddr, rkey), ordered before every byte this
  // channel sends after it, so that the receiver, once it read those bytes,
  // knows the write landed. *posted false: would block (send queue full).
  virtual bool canPut() const { return false; }
  virtual weftResult_t tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                              size_t bytes, bool* posted) {
    (void)localAddr, (void)lkey, (void)remoteAddr, (void)rkey, (void)bytes;
    *posted = false;
    return weftInternalError;
  }
};

// Which channel reaches which peer: what a transport hands the collectives.
// Each (peer, stream) pair is an independent ordered stream in each direction.
class ChannelTable {
 public:
  virtual ~ChannelTable() = default;
  virtual Channel* sendChannel(int peer, int stream) = 0;
  virtual Channel* recvChannel(int peer, int stream) = 0;
  virtual int nstreams() const = 0;
  // The doorbell local peers ring for this rank (nullptr without shared memory).
  virtual Doorbell* doorbell() { return nullptr; }
};

}  // namespace weft
