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

struct Doorbell;     // transports/shm/doorbell.h
class RemoteWrites;  // transports/rdma_memory.h

// How to sleep until a channel may move again; one wait (the flow engine's)
// serves every transport through it.
struct ChannelWake {
  enum class Via {
    kFd,        // poll() `fd`: POLLIN to receive, POLLOUT to send (TCP)
    kDoorbell,  // the rank's doorbell (ChannelTable::doorbell); `fd` becomes
                // readable only when the peer is gone (shared memory)
    kRetry,     // nothing to sleep on: retry, yielding (verbs' completion queues)
    kFdIn,      // poll() `fd` for POLLIN whichever way the flow moves: a
                // listener where the channel's connections are still arriving
  };
  Via via = Via::kRetry;
  int fd = -1;
};

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
  // How a waiter sleeps until this channel may move (ChannelWake below).
  virtual ChannelWake wake() const = 0;
  // Whether the peer is still there, for channels on which a dead peer does
  // not fail the next move (shared memory: what it wrote stays readable):
  // weftRemoteError naming it once it is gone. Others answer weftSuccess and
  // fail their next trySend/tryRecv instead.
  virtual weftResult_t checkPeer() const { return weftSuccess; }
  virtual const std::string& peerName() const = 0;
  // One-sided writes ordered with this channel's bytes, where the transport
  // has them (verbs: transports/rdma_memory.h); nullptr elsewhere.
  virtual RemoteWrites* remoteWrites() { return nullptr; }
  // Makes the channel ready to move, which may wait for the peer to do the
  // same (TCP opens a peer's large-call connections on first use). The flow
  // engine calls it for every channel of a plan before it moves any byte of
  // that plan, after the call headers went out, so no peer waits on data
  // held back meanwhile. A failure is weftRemoteError naming the peer.
  virtual weftResult_t prepare() { return weftSuccess; }
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
  // Set while a plan that moves data with several peers at once takes its
  // channels: one connection per peer, stream and direction where the
  // transport would spread a peer's bytes over several (TCP's lanes). The
  // peers' flows already move side by side, which is what lanes are for,
  // and where many flows share one link the slowest lane of a peer gates
  // that peer's whole stream. Every rank of a call sets the same (it follows
  // from the plan), and only the thread running the calls.
  virtual void setWide(bool wide) { (void)wide; }
};

}  // namespace weft
