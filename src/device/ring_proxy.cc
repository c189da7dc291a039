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
// Put edges: the outbox `head` is released with rank + 1's credit (the NIC
// read the slot before the message could be consumed), and where the inbox
// slots are GPU memory the flush runs before the release of `tail`.
#include "device/ring_proxy.h"

#include <cstring>
#include <string>

#include "base/error.h"
#include "device/gpu_peer_layout.h"
#include "transports/rdma_memory.h"
#include "weft/device/atomics.h"

namespace weft {
namespace {

constexpr uint32_t kFrameData = 1;
constexpr uint32_t kFrameCredit = 2;
constexpr uint32_t kFramePut = 3;

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
  putOut_ = putIn_ = inboxGpu_ = false;
  flush_ = nullptr;
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

void RingProxy::sendByPut(uint64_t localSlots, uint32_t lkey, uint64_t remoteSlots, uint32_t rkey) {
  putOut_ = true;
  putLocal_ = localSlots;
  putLkey_ = lkey;
  putRemote_ = remoteSlots;
  putRkey_ = rkey;
}

void RingProxy::landByPut(bool gpuSlots, std::function<weftResult_t()> flush) {
  putIn_ = true;
  inboxGpu_ = gpuSlots;
  flush_ = std::move(flush);
}

void RingProxy::beginCall(const uint64_t* sendEnd, const uint64_t* recvEnd) {
  for (int c = 0; c < channels_; ++c) {
    lanes_[static_cast<size_t>(c)].sendEnd = sendEnd[c];
    lanes_[static_cast<size_t>(c)].recvEnd = recvEnd[c];
  }
}

bool RingProxy::busy(const Writer& w) const {
  return w.putDue || w.frameDone < sizeof(Frame) || w.payloadDone < w.payloadBytes;
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
    const size_t slot = ringRegionOffset(c) + kRingSlotsOffset + (k % kRingSlots) * kRingSlotBytes;
    w.frame = Frame{static_cast<uint32_t>(c), putOut_ ? kFramePut : kFrameData, bytes};
    w.frameDone = 0;
    w.payload = putOut_ ? nullptr : outbox_ + slot;
    w.payloadBytes = putOut_ ? 0 : bytes;
    w.payloadDone = 0;
    w.putDue = putOut_;
    w.putFrom = putLocal_ + slot;
    w.putTo = putRemote_ + slot;
    w.rr = (c + 1) % channels_;
    return true;
  }
  return false;
}

weftResult_t RingProxy::write(Writer& w, bool* moved) {
  for (;;) {
    if (!busy(w) && !startFrame(w)) return weftSuccess;
    if (w.putDue) {  // the payload goes first, on the QP that carries the frame
      bool posted = false;
      WEFT_CHECK(w.ch->remoteWrites()->tryPut(w.putFrom, putLkey_, w.putTo, putRkey_, w.frame.value,
                                              &posted));
      if (!posted) return weftSuccess;
      w.putDue = false;
      *moved = true;
    }
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
    } else if (w.frame.kind == kFramePut) {
      ++lanes_[w.frame.channel].sent;  // the slot is returned with rank + 1's credit
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
    // On a put edge the NIC has read a slot once rank + 1 consumed its message.
    if (putOut_)
      dev::storeRelease(
          word(outbox_ + ringRegionOffset(static_cast<int>(f.channel)), kRingHeadOffset),
          lane.credit);
    return weftSuccess;
  }
  const bool put = f.kind == kFramePut && putIn_;
  if (f.kind == kFrameData && inboxGpu_)
    return setError(weftInternalError,
                    "GPU ring proxy: %s sent a payload frame, but our inbox slots are GPU memory "
                    "that only its RDMA writes reach",
                    from.c_str());
  if ((f.kind == kFrameData || put) && inbox_ != nullptr) {
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
    if (put) return land(static_cast<int>(f.channel), f.value);  // already in the slot
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
      if (rd.payload == nullptr) continue;  // a credit, or a put (landed already)
    }
    while (rd.payloadGot < rd.payloadBytes) {
      size_t n = 0;
      WEFT_CHECK(rd.ch->tryRecv(rd.payload + rd.payloadGot, rd.payloadBytes - rd.payloadGot, &n));
      if (n == 0) return weftSuccess;
      rd.payloadGot += n;
      *moved = true;
    }
    rd.payload = nullptr;
    WEFT_CHECK(land(static_cast<int>(rd.frame.channel), rd.payloadBytes));
  }
  return weftSuccess;
}

// Message `landed` of `channel` is in its inbox slot: tell the kernel, at
// once for host slots, after the pump's flush for GPU slots.
weftResult_t RingProxy::land(int channel, uint64_t bytes) {
  unsigned char* region = inbox_ + ringRegionOffset(channel);
  Lane& lane = lanes_[static_cast<size_t>(channel)];
  word(region, kRingSizesOffset)[lane.landed % kRingSlots] = bytes;
  ++lane.landed;
  if (inboxGpu_) {
    flushDue_ = true;
    return weftSuccess;
  }
  lane.published = lane.landed;
  dev::storeRelease(word(region, kRingTailOffset), lane.landed);  // slot and size first
  return weftSuccess;
}

// GPU slots: one flush makes every NIC write landed so far visible to the
// GPU, then the kernel may see the tails.
weftResult_t RingProxy::publish() {
  if (!flushDue_) return weftSuccess;
  WEFT_CHECK(flush_());
  flushDue_ = false;
  for (int c = 0; c < channels_; ++c) {
    Lane& lane = lanes_[static_cast<size_t>(c)];
    if (lane.published == lane.landed) continue;
    lane.published = lane.landed;
    dev::storeRelease(word(inbox_ + ringRegionOffset(c), kRingTailOffset), lane.landed);
  }
  return weftSuccess;
}

weftResult_t RingProxy::pump(bool* moved) {
  *moved = false;
  for (Reader& rd : readers_) WEFT_CHECK(read(rd, moved));
  WEFT_CHECK(publish());
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
    if (inbox_ != nullptr && (lane.landed != lane.recvEnd || lane.published != lane.recvEnd ||
                              lane.credited != lane.recvEnd))
      return false;
  }
  return true;
}

}  // namespace weft
