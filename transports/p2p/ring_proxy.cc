// The host proxy of the GPU ring's network edges: frames, credits and the
// non-blocking pump (see ring_proxy.h for the protocol).
//
// Memory ordering with the kernel (include/weft/device/atomics.h): the kernel
// writes a message, then release-stores the outbox `tail` at system scope; we
// acquire-load `tail` before reading its size word and slot. In the inbox we
// write the slot and size word, then release-store `tail`, which the kernel
// acquire-loads before reading them. Credits the other way: we release-store
// the outbox `head` only after the transport took every byte of the slot, and
// we acquire-load the inbox `head` before telling rank - 1 a slot is free.
#include "transports/p2p/ring_proxy.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "transports/p2p/p2p_layout.h"
#include "weft/device/atomics.h"

namespace weft {
namespace {

constexpr uint32_t kFrameData = 1;
constexpr uint32_t kFrameCredit = 2;

uint64_t* word(unsigned char* region, size_t offset) {
  return reinterpret_cast<uint64_t*>(region + offset);
}

}  // namespace

void RingProxy::init(ChannelTable* table, int channels, int next, int prev, unsigned char* outbox,
                     unsigned char* inbox) {
  channels_ = channels;
  nstreams_ = table->nstreams() > 0 ? table->nstreams() : 1;
  next_ = next;
  prev_ = prev;
  outbox_ = outbox;
  inbox_ = inbox;
  lanes_.assign(static_cast<size_t>(channels), Lane{});
  writers_.clear();
  readers_.clear();
  // With two ranks, or one neighbour on each side being the same rank, one
  // stream each way carries both our data and our credits.
  const bool same = outbox != nullptr && inbox != nullptr && next == prev;
  for (int s = 0; s < nstreams_; ++s) {
    if (outbox != nullptr) {
      Writer w;
      w.ch = table->sendChannel(next, s);
      w.stream = s;
      w.toNext = true;
      w.toPrev = same;
      writers_.push_back(w);
      Reader rd;
      rd.ch = table->recvChannel(next, s);  // its credits (and, if same, its data)
      rd.stream = s;
      rd.fromNext = true;
      rd.fromPrev = same;
      readers_.push_back(rd);
    }
    if (inbox != nullptr && !same) {
      Writer w;
      w.ch = table->sendChannel(prev, s);
      w.stream = s;
      w.toPrev = true;
      writers_.push_back(w);
      Reader rd;
      rd.ch = table->recvChannel(prev, s);
      rd.stream = s;
      rd.fromPrev = true;
      readers_.push_back(rd);
    }
  }
}

void RingProxy::beginCall(const uint64_t* sendEnd, const uint64_t* recvEnd) {
  for (int c = 0; c < channels_; ++c) {
    lanes_[static_cast<size_t>(c)].sendEnd = sendEnd[c];
    lanes_[static_cast<size_t>(c)].recvEnd = recvEnd[c];
  }
}

bool RingProxy::busy(const Writer& w) const {
  return w.frameDone < sizeof(Frame) || w.payloadDone < w.payloadBytes;
}

// Picks this stream's next frame: a credit first (it unblocks a sender and is
// small), else the oldest posted message of a channel with credit.
bool RingProxy::startFrame(Writer& w) {
  for (int i = 0; i < channels_; ++i) {
    const int c = (w.rr + i) % channels_;
    if (c % nstreams_ != w.stream) continue;
    Lane& lane = lanes_[static_cast<size_t>(c)];
    if (w.toPrev) {
      unsigned char* region = inbox_ + ringRegionOffset(c);
      const uint64_t head = dev::loadAcquire(word(region, kRingHeadOffset));
      if (head > lane.credited) {
        lane.credited = head;
        w.frame = Frame{static_cast<uint32_t>(c), kFrameCredit, head};
        w.frameDone = 0;
        w.payload = nullptr;
        w.payloadBytes = w.payloadDone = 0;
        return true;
      }
    }
  }
  for (int i = 0; i < channels_; ++i) {
    const int c = (w.rr + i) % channels_;
    if (c % nstreams_ != w.stream || !w.toNext) continue;
    Lane& lane = lanes_[static_cast<size_t>(c)];
    unsigned char* region = outbox_ + ringRegionOffset(c);
    const uint64_t k = lane.sent;
    if (k >= dev::loadAcquire(word(region, kRingTailOffset))) continue;  // not posted yet
    if (k - lane.credit >= kRingSlots) continue;  // rank + 1 has no free slot for it
    const uint64_t bytes = word(region, kRingSizesOffset)[k % kRingSlots];
    w.frame = Frame{static_cast<uint32_t>(c), kFrameData, bytes};
    w.frameDone = 0;
    w.payload = region + kRingSlotsOffset + (k % kRingSlots) * kRingSlotBytes;
    w.payloadBytes = bytes;
    w.payloadDone = 0;
    w.rr = (c + 1) % channels_;
    return true;
  }
  return false;
}

weftResult_t RingProxy::write(Writer& w, bool* moved) {
  for (;;) {
    if (!busy(w) && !startFrame(w)) return weftSuccess;
    while (w.frameDone < sizeof(Frame)) {
      size_t n = 0;
      const auto* bytes = reinterpret_cast<const unsigned char*>(&w.frame);
      WEFT_CHECK(w.ch->trySend(bytes + w.frameDone, sizeof(Frame) - w.frameDone, &n));
      if (n == 0) return weftSuccess;
      w.frameDone += n;
      *moved = true;
    }
    while (w.payloadDone < w.payloadBytes) {
      size_t n = 0;
      WEFT_CHECK(w.ch->trySend(w.payload + w.payloadDone, w.payloadBytes - w.payloadDone, &n));
      if (n == 0) return weftSuccess;
      w.payloadDone += n;
      *moved = true;
    }
    if (w.frame.kind == kFrameData) {
      // Every byte is the transport's now: the kernel may reuse the slot.
      Lane& lane = lanes_[w.frame.channel];
      ++lane.sent;
      dev::storeRelease(
          word(outbox_ + ringRegionOffset(static_cast<int>(w.frame.channel)), kRingHeadOffset),
          lane.sent);
    }
  }
}

// A whole frame header is in rd.frame: check it and say where its payload goes.
weftResult_t RingProxy::arrived(Reader& rd) {
  const Frame f = rd.frame;
  const std::string from = rd.ch->peerName();
  if (f.channel >= static_cast<uint32_t>(channels_))
    return setError(weftInternalError, "GPU ring proxy: %s sent a frame for channel %u of %d",
                    from.c_str(), f.channel, channels_);
  Lane& lane = lanes_[f.channel];
  if (f.kind == kFrameCredit && outbox_ != nullptr) {
    if (f.value < lane.credit || f.value > lane.sent)
      return setError(weftInternalError,
                      "GPU ring proxy: %s credited %llu messages of channel %u, but %llu were "
                      "sent and %llu credited before",
                      from.c_str(), static_cast<unsigned long long>(f.value), f.channel,
                      static_cast<unsigned long long>(lane.sent),
                      static_cast<unsigned long long>(lane.credit));
    lane.credit = f.value;
    return weftSuccess;
  }
  if (f.kind == kFrameData && inbox_ != nullptr) {
    unsigned char* region = inbox_ + ringRegionOffset(static_cast<int>(f.channel));
    const uint64_t k = lane.landed;
    // The sender's credit check makes this hold; a frame that breaks it would
    // overwrite a slot the kernel still reads.
    if (f.value > kRingSlotBytes ||
        k - dev::loadAcquire(word(region, kRingHeadOffset)) >= kRingSlots)
      return setError(weftInternalError,
                      "GPU ring proxy: %s sent message %llu of channel %u (%llu bytes) with no "
                      "free slot for it",
                      from.c_str(), static_cast<unsigned long long>(k), f.channel,
                      static_cast<unsigned long long>(f.value));
    rd.payload = region + kRingSlotsOffset + (k % kRingSlots) * kRingSlotBytes;
    rd.payloadBytes = f.value;
    rd.payloadGot = 0;
    return weftSuccess;
  }
  return setError(weftInternalError,
                  "GPU ring proxy: %s sent a frame of kind %u, which this edge does not take",
                  from.c_str(), f.kind);
}

bool RingProxy::expecting(const Reader& rd) const {
  if (rd.payload != nullptr || rd.frameGot != 0) return true;  // within a frame
  for (int c = rd.stream; c < channels_; c += nstreams_) {
    const Lane& lane = lanes_[static_cast<size_t>(c)];
    if (rd.fromNext && lane.credit < lane.sendEnd) return true;  // the last credit is the end
    if (rd.fromPrev && lane.landed < lane.recvEnd) return true;
  }
  return false;
}

weftResult_t RingProxy::read(Reader& rd, bool* moved) {
  while (expecting(rd)) {
    if (rd.payload == nullptr) {
      auto* bytes = reinterpret_cast<unsigned char*>(&rd.frame);
      size_t n = 0;
      WEFT_CHECK(rd.ch->tryRecv(bytes + rd.frameGot, sizeof(Frame) - rd.frameGot, &n));
      if (n == 0) return weftSuccess;
      *moved = true;
      rd.frameGot += n;
      if (rd.frameGot < sizeof(Frame)) continue;
      rd.frameGot = 0;
      WEFT_CHECK(arrived(rd));
      if (rd.payload == nullptr) continue;  // a credit
    }
    while (rd.payloadGot < rd.payloadBytes) {
      size_t n = 0;
      WEFT_CHECK(rd.ch->tryRecv(rd.payload + rd.payloadGot, rd.payloadBytes - rd.payloadGot, &n));
      if (n == 0) return weftSuccess;
      rd.payloadGot += n;
      *moved = true;
    }
    const int c = static_cast<int>(rd.frame.channel);
    unsigned char* region = inbox_ + ringRegionOffset(c);
    Lane& lane = lanes_[static_cast<size_t>(c)];
    word(region, kRingSizesOffset)[lane.landed % kRingSlots] = rd.payloadBytes;
    ++lane.landed;
    dev::storeRelease(word(region, kRingTailOffset), lane.landed);  // slot and size first
    rd.payload = nullptr;
  }
  return weftSuccess;
}

weftResult_t RingProxy::pump(bool* moved) {
  *moved = false;
  for (Reader& rd : readers_) WEFT_CHECK(read(rd, moved));
  for (Writer& w : writers_) WEFT_CHECK(write(w, moved));
  return weftSuccess;
}

bool RingProxy::callDone() const {
  for (const Writer& w : writers_)
    if (busy(w)) return false;
  for (const Reader& rd : readers_)
    if (rd.payload != nullptr || rd.frameGot != 0) return false;
  for (const Lane& lane : lanes_) {
    if (outbox_ != nullptr && (lane.sent != lane.sendEnd || lane.credit != lane.sendEnd))
      return false;
    if (inbox_ != nullptr && (lane.landed != lane.recvEnd || lane.credited != lane.recvEnd))
      return false;
  }
  return true;
}

}  // namespace weft
