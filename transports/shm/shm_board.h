// A rank's publication board in its shared-memory segment: small buffers
// published for every local peer to read in place (node_memory.h's
// publishAndWait, the one-round collectives' transport).
// `seq` counts the calls published so far; the data of call s is in slot s % 2.
// Ordering: the writer fills the slot, then stores seq (release); a reader
// loads seq (acquire) and then reads the slot. A writer reuses slot s % 2 only
// for call s + 2, which it starts after seeing every peer publish s + 1, and a
// peer publishes s + 1 only after it finished reading call s: no slot is
// overwritten while someone still reads it.
// `call[s % 2]` is the header of the collective that publish s starts (see
// base/call_header.h), written before seq and in seq's cache line so a
// reader gets both with one miss.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/call_header.h"

namespace weft {

constexpr size_t kBoardSlotBytes = 32 << 10;
struct ShmBoard {
  alignas(64) std::atomic<uint64_t> seq{0};
  CallHeader call[2];
  alignas(64) char slot[2][kBoardSlotBytes];
};

}  // namespace weft
