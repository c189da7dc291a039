// The host proxy of the GPU ring's network edges ("a proxy thread
// serves network transports"). Where the ring crosses nodes, a kernel cannot
// reach its neighbour's GPU, so the edge becomes two FIFOs in pinned, mapped
// host memory (same layout as the p2p regions, gpu_peer_layout.h):
//   outbox  our kernel posts into it as into a neighbour's FIFO; the proxy
//           reads each message and hands it to the host channel to rank + 1,
//           then returns the slot to the kernel (the outbox `head`);
//   inbox   the proxy lands the messages of rank - 1 in it and bumps `tail`;
//           our kernel consumes them and advances the inbox `head`.
// The kernel's code does not change: these are dev::Channels like any other.
//
// Wire format, on the host channels (TCP or verbs byte streams); channel c of
// the ring uses host stream c % nstreams, so several ring channels may share
// one stream:
//   frame = u32 channel, u32 kind, u64 value   (16 bytes, host byte order)
//   kind 1 (data):   value = payload bytes (<= slot size), payload follows;
//                    the n-th data frame of a channel is its message n.
//   kind 2 (credit): value = messages the receiver's kernel consumed so far.
//   kind 3 (put):    value = payload bytes, which the sender RDMA-wrote into
//                    slot n % slots of our inbox before this frame (verbs
//                    edges, ring_rdma.h: RemoteWrites::tryPut orders the write
//                    before the frame, so the frame means the bytes landed).
// On a put edge the outbox slot is the NIC's to read until rank + 1 consumed
// the message, so the outbox `head` we return is its credit, not `sent`.
// End-to-end credit: the sending proxy puts message k on the wire only once
// k - credit < slots, so the receiving proxy always has a free inbox slot for
// a frame that arrives and never stops reading a stream. That is why ring
// channels may share a stream without one full channel blocking another.
//
// Runs on the progress thread, inside the watch of each ring call
// (src/device/device_ring_call.cc), which calls pump() until the call's
// messages are all sent and every credit is back: the host channels are then
// as clean as after a host collective, for the calls that follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "transports/channel.h"
#include "weft/weft.h"

namespace weft {

class RingProxy {
 public:
  // `outbox` (host address; nullptr: rank + 1 is on our node) and `inbox`
  // (nullptr: rank - 1 is) each hold `channels` regions; `next` and `prev`
  // are the neighbours' ranks in `table`.
  void init(ChannelTable* table, int channels, int next, int prev, unsigned char* outbox,
            unsigned char* inbox);
  bool active() const { return outbox_ != nullptr || inbox_ != nullptr; }
  // Put mode for our data to rank + 1: message k of channel c is written from
  // localSlots + ringRegionOffset(c) + slot offset (NIC address, lkey) to the
  // same offset from remoteSlots (rkey); the frames carry no payload.
  void sendByPut(uint64_t localSlots, uint32_t lkey, uint64_t remoteSlots, uint32_t rkey);
  // Messages from rank - 1 may arrive by put. `gpuSlots`: our inbox slots are
  // GPU memory, which the host cannot write (payload frames are refused) and
  // whose NIC writes `flush` makes visible before the kernel hears of them:
  // once per pump for all the messages it landed, since one read through the
  // NIC orders every write the NIC made before it.
  void landByPut(bool gpuSlots, std::function<weftResult_t()> flush);

  // The messages every channel carries once the current call is over, to
  // the next rank (sendEnd) and from the previous one (recvEnd); channels
  // the call does not use keep their current counts.
  void beginCall(const uint64_t* sendEnd, const uint64_t* recvEnd);
  // Moves whatever can move without blocking; *moved tells whether anything
  // did. A dead peer or a malformed frame is an error (weftRemoteError /
  // weftInternalError) with a sentence.
  weftResult_t pump(bool* moved);
  // Every message of the call sent and credited, every frame of it received
  // and credited back: nothing of this call is left on the host channels.
  bool callDone() const;

 private:
  struct Frame {
    uint32_t channel;
    uint32_t kind;
    uint64_t value;
  };
  // One outgoing byte stream (to a neighbour, one host stream) and the frame
  // it is writing.
  struct Writer {
    Channel* ch = nullptr;
    int stream = 0;
    bool toNext = false, toPrev = false;  // carries our data / our credits
    Frame frame{};
    size_t frameDone = sizeof(Frame);  // == sizeof(Frame): no frame being written
    const unsigned char* payload = nullptr;
    size_t payloadBytes = 0, payloadDone = 0;
    bool putDue = false;  // the frame's put is still to post (put mode)
    uint64_t putFrom = 0, putTo = 0;
    int rr = 0;  // round-robin start over the channels
  };
  // One incoming byte stream and the frame it is reading. It reads only the
  // frames the call still expects: what follows them on the stream belongs
  // to the next call (its call header, say), which is not ours to take.
  struct Reader {
    Channel* ch = nullptr;
    int stream = 0;
    bool fromNext = false, fromPrev = false;  // carries credits / data for us
    Frame frame{};
    size_t frameGot = 0;
    unsigned char* payload = nullptr;  // set while a data frame's payload is due
    size_t payloadBytes = 0, payloadGot = 0;
  };
  struct Lane {              // one ring channel's counters
    uint64_t sent = 0;       // data or put frames written (frames: = the outbox head)
    uint64_t credit = 0;     // messages rank + 1 consumed (its credit frames)
    uint64_t landed = 0;     // data frames received into the inbox
    uint64_t published = 0;  // the inbox tail the kernel sees (GPU slots: after a flush)
    uint64_t credited = 0;   // inbox head value last put in a credit frame
    uint64_t sendEnd = 0;    // the messages to rank + 1 once the call is over
    uint64_t recvEnd = 0;    // and from rank - 1
  };

  bool busy(const Writer& w) const;
  bool expecting(const Reader& rd) const;
  bool startFrame(Writer& w);
  weftResult_t write(Writer& w, bool* moved);
  weftResult_t read(Reader& rd, bool* moved);
  weftResult_t arrived(Reader& rd);
  weftResult_t land(int channel, uint64_t bytes);
  weftResult_t publish();

  int channels_ = 0, nstreams_ = 1, next_ = -1, prev_ = -1;
  unsigned char* outbox_ = nullptr;
  unsigned char* inbox_ = nullptr;
  bool putOut_ = false;  // sendByPut
  uint64_t putLocal_ = 0, putRemote_ = 0;
  uint32_t putLkey_ = 0, putRkey_ = 0;
  bool putIn_ = false, inboxGpu_ = false;  // landByPut
  bool flushDue_ = false;                  // GPU slots: messages landed, not yet published
  std::function<weftResult_t()> flush_;
  std::vector<Lane> lanes_;
  std::vector<Writer> writers_;
  std::vector<Reader> readers_;
};

}  // namespace weft
