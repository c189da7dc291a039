// Point-to-point size check. With call checking on (the default), every
// weftSend puts a 24-byte header (count, datatype) on the wire ahead of its
// data, and the matching weftRecv compares it with its own count and datatype
// before reading any data. A disagreement fails the receive with
// weftInvalidUsage naming the peer and both counts, instead of leaving the
// byte stream out of step (wrong data in this and later calls, or a hang).
// Only the receiver can tell: the sender's call may already have completed
// (its bytes were accepted by the transport) and learns of it from its next
// call on the then broken communicator.
//
// Sizes: 24 bytes, as a collective's call header, so that a receive meeting a
// collective (or a collective meeting a send) reads a whole header and names
// the mismatch instead of waiting for bytes that never come. Data of up to
// kP2PShortBytes follows the header at once: header and data then fit the 48
// bytes a shared-memory FIFO hands over beside its counter (shm_channel.h).
// Larger data follows kP2PHeaderPad bytes of padding, so that it starts 64
// bytes after the header: TCP's 4 KiB read-ahead takes the header and the
// first data, and the rest lands at offset 4096 - 64 of the receive buffer
// (at 16 that misaligned destination halved the kernel's copy rate). Both
// ends know whether padding follows from their own count, which the header
// has just shown to be the same.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/weft.h"

namespace weft {

struct P2PHeader {
  uint32_t magic = 0;  // kP2PMagic
  uint8_t datatype = 0;
  uint8_t pad[3] = {0, 0, 0};
  uint64_t count = 0;
  uint64_t reserved = 0;
};
static_assert(sizeof(P2PHeader) == 24, "P2PHeader is a wire format");

constexpr size_t kP2PShortBytes = 24;  // data that follows its header unpadded
constexpr size_t kP2PHeaderPad = 40;   // padding before larger data

// Bytes between a header's start and its data's start.
inline size_t p2pDataOffset(size_t dataBytes) {
  return sizeof(P2PHeader) + (dataBytes > kP2PShortBytes ? kP2PHeaderPad : 0);
}

constexpr uint32_t kP2PMagic = 0x57503250;  // "WP2P"

// The header a send of `count` x `datatype` carries.
P2PHeader makeP2PHeader(uint64_t count, int datatype);

// Checks what rank `peer` sent against this rank's receive of `count` x
// `datatype`; weftInvalidUsage with the sentence set on disagreement.
weftResult_t compareP2PHeader(const P2PHeader& theirs, int peer, int rank, uint64_t count,
                              int datatype);

}  // namespace weft
