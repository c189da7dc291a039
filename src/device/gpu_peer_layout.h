// Where each channel of the GPU ring lives in a rank's FIFO memory
// (gpu_peer_ring.h). One region per channel (CTA), each holding:
//   slots  kRingSlots x kRingSlotBytes  incoming messages (written by rank - 1)
//   sizes  kRingSlots words             their byte lengths (written by rank - 1)
//   tail   one word, own 128-byte line  messages posted to us (written by rank - 1)
//   head   one word, own 128-byte line  messages rank + 1 consumed of ours
//                                       (written by rank + 1, polled by us)
// Counters sit on their own lines so that a poll never shares a line with
// data being written. Four 64 KiB slots keep a sender a few pieces ahead
// (the schedule needs at least two) at 256 KiB per channel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft {

constexpr uint32_t kRingSlots = 4;
constexpr uint32_t kRingSlotBytes = 64 << 10;
constexpr size_t kRingLine = 128;
constexpr size_t kRingSlotsOffset = 0;
constexpr size_t kRingSizesOffset = size_t{kRingSlots} * kRingSlotBytes;
constexpr size_t kRingTailOffset = kRingSizesOffset + kRingLine;  // kRingSlots words fit a line
constexpr size_t kRingHeadOffset = kRingTailOffset + kRingLine;
constexpr size_t kRingRegionBytes = kRingHeadOffset + kRingLine;
static_assert(kRingSlots * sizeof(uint64_t) <= kRingLine, "the size words fill one line");

inline size_t ringRegionOffset(int channel) {
  return kRingRegionBytes * static_cast<size_t>(channel);
}
inline size_t ringMemoryBytes(int channels) { return ringRegionOffset(channels); }

}  // namespace weft
