// Shared-memory channel: a single-producer single-consumer byte ring in the
// receiver's segment (the receiver reads its own memory; the sender writes
// across). `tail` counts bytes ever written, `head` bytes ever consumed; the
// sender's credit is capacity - (tail - head). Each counter has its own cache
// line so the two sides do not false-share.
//
// Ordering: the sender copies data, then stores tail with release; the
// receiver loads tail with acquire, then reads data. The receiver reads, then
// stores head with release; the sender loads head with acquire before reusing
// that space. After publishing, each side rings the other's doorbell.
//
// Small sends (up to kShmInlineBytes) are also copied beside tail, in its
// cache line, so that the receiver of a small message pays one cache-line
// hand-off (tail and bytes together) instead of two (tail, then the ring's
// line). The ring stays the truth: the receiver takes bytes from the inline
// copy only when its tag says they are the ones it wants, and checks after
// copying that the sender did not start a newer copy meanwhile (a seqlock:
// shm_channel.cc, copyInline and readInline, give the orders).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "transports/channel.h"
#include "transports/shm/doorbell.h"

namespace weft {

constexpr size_t kShmInlineBytes = 48;

struct ShmFifoHeader {
  alignas(64) std::atomic<uint64_t> tail{0};
  // (first byte's stream offset << 6) | length of the inline copy; kShmInlineBusy
  // while the sender rewrites it. 0 (length 0) serves nothing.
  std::atomic<uint64_t> inlineTag{0};
  std::atomic<uint64_t> inlineWords[kShmInlineBytes / 8];
  alignas(64) std::atomic<uint64_t> head{0};
};
static_assert(sizeof(ShmFifoHeader) == 128, "one cache line per counter");

// Bytes a FIFO of `capacity` data bytes takes in a segment (header + data, 4 KiB aligned).
size_t shmFifoFootprint(size_t capacity);

class ShmChannel : public Channel {
 public:
  // `fifo` points at a header followed by `capacity` data bytes. `wake` is the
  // doorbell of the other side; `deathFd` a socket to the peer that becomes
  // readable only when the peer is gone (it carries no data).
  ShmChannel(char* fifo, size_t capacity, bool isSender, Doorbell* wake, int deathFd,
             std::string peer);
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override;
  ChannelWake wake() const override { return {ChannelWake::Via::kDoorbell, deathFd_}; }
  weftResult_t checkPeer() const override;
  const std::string& peerName() const override { return peer_; }

 private:
  ShmFifoHeader* hdr_;
  char* data_;
  size_t capacity_;
  uint64_t mine_ = 0;  // our own counter's value (tail for the sender, head for the receiver)
  // The other side's counter as last loaded: it only grows, so a stale value
  // is safe (less space, fewer bytes), and is refreshed when it falls short.
  uint64_t seenHead_ = 0;  // sender
  uint64_t seenTail_ = 0;  // receiver
  void copyInline(const void* data, size_t n);
  bool readInline(void* data, size_t n);
  Doorbell* wake_;
  int deathFd_;
  std::string peer_;
};

}  // namespace weft
