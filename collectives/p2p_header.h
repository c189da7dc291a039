// Point-to-point size check. With call checking on (the default), every
// weftSend puts a 64-byte header (count, datatype) on the wire ahead of its
// data, and the matching weftRecv compares it with its own count and datatype
// before reading any data. A disagreement fails the receive with
// weftInvalidUsage naming the peer and both counts, instead of leaving the
// byte stream out of step (wrong data in this and later calls, or a hang).
// Only the receiver can tell: the sender's call may already have completed
// (its bytes were accepted by the transport) and learns of it from its next
// call on the then broken communicator. 64 bytes, not 16: TCP's 4 KiB
// read-ahead takes the header and the first data, so the rest of the data
// lands at offset 4096 - sizeof(header) of the receive buffer; at 16 that
// misaligned destination halved the kernel's copy rate.
#pragma once

#include <cstdint>

#include "weft/weft.h"

namespace weft {

struct P2PHeader {
  uint32_t magic = 0;  // kP2PMagic
  uint8_t datatype = 0;
  uint8_t pad[3] = {0, 0, 0};
  uint64_t count = 0;
  uint8_t reserved[48] = {};
};
static_assert(sizeof(P2PHeader) == 64, "P2PHeader is a wire format");

constexpr uint32_t kP2PMagic = 0x57503250;  // "WP2P"

// The header a send of `count` x `datatype` carries.
P2PHeader makeP2PHeader(uint64_t count, int datatype);

// Checks what rank `peer` sent against this rank's receive of `count` x
// `datatype`; weftInvalidUsage with the sentence set on disagreement.
weftResult_t compareP2PHeader(const P2PHeader& theirs, int peer, int rank, uint64_t count,
                              int datatype);

}  // namespace weft
