// One reliable-connected queue pair to a peer, carrying a byte stream in each
// direction as the channel contract asks (transports/channel.h); the channels
// the collectives see are one of these, or stripe one stream over several
// (transports/striped_channel.h).
//
// Wire protocol, sender -> receiver. Every WRITE_WITH_IMM's immediate says what
// it was in its top 2 bits, carries the sender's count of immediates on this
// QP (mod 512) in the next 9 and a byte count in the low 21. RC delivers them
// in order, once each; the receiver checks the count, so that a provider that
// lost or repeated a completion fails the connection with a sentence instead
// of shifting the byte stream (ring accounting would then read bytes that are
// not there, silently):
//   RING n: n bytes in the receiver's ring. The receiver owns a ring of
//     `ringBytes` registered for remote write; the sender copies bytes into its
//     own registered staging ring (at the same offset; small ones go inline
//     instead) and RDMA-WRITEs them to ring[ringSent % ringBytes]. RC delivers a
//     WRITE_WITH_IMM completion only after its data, so the receive completion
//     is how the receiver learns that the bytes are in place.
//   RTS n (zero-length): the next n stream bytes come zero-copy (below).
//   CTS n (receiver -> sender): 16 bytes {addr u64, rkey u32, len u32 = n}
//     written into the sender's CTS slot: "write the next n bytes there".
//   DATA n: n stream bytes written from the sender's registered user buffer to
//     the address of the current CTS (after the bytes already written to it).
// Credits (ring only): after consuming, the receiver RDMA-WRITEs its 64-bit
// consumed ring byte count into the sender's credit word (a plain aligned
// 8-byte write; a stale read only delays the sender). The sender may have at
// most ringBytes - (ringSent - consumed) bytes in flight, which also frees its
// staging: the peer consumed them, so the HCA had read them.
// Zero-copy rendezvous (ib_rendezvous.cc), for a send of WEFT_IB_ZCOPY_THRESHOLD
// bytes or more whose buffer registers: the sender posts RTS n and reports
// nothing moved until, per CTS, its signalled DATA write completed; then it
// reports those bytes (the HCA has read them, the caller may reuse the buffer).
// The receiver, when the stream reaches the RTS, registers the buffer the
// caller gave tryRecv (or, if it cannot, a private bounce buffer it copies out
// of) and posts a CTS for min(its length, what is left of the RTS, 1 MiB). The
// DATA completion means the bytes are in the caller's buffer: no copy at all.
// Only one CTS is outstanding per direction, so its slot is never overwritten
// while the sender reads it.
// Send-queue accounting: every 16th work request (and any that fills the queue)
// is signalled; a signalled completion retires itself and the unsignalled ones
// before it (its wr_id holds the count; bit 32 marks a DATA write).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <string>

#include "transports/channel.h"
#include "transports/ib/ib_device.h"
#include "transports/ib/reg_cache.h"
#include "transports/rdma_memory.h"

struct rdma_cm_id;

namespace weft {

// The immediate of every WRITE_WITH_IMM (see the protocol above).
// make() leaves the sequence bits 0; postWrite() fills them in.
namespace ibimm {
enum Kind : uint32_t { kRing = 0, kRts = 1, kCts = 2, kData = 3 };
constexpr uint32_t kCountBits = 21;  // ring writes <= 512 KiB, CTS and DATA <= 1 MiB
constexpr uint32_t kSeqMask = (1u << 9) - 1;
constexpr uint32_t kMaxCount = (1u << kCountBits) - 1;
inline uint32_t make(Kind k, uint64_t n) { return (k << 30) | static_cast<uint32_t>(n); }
inline uint32_t withSeq(uint32_t imm, uint32_t seq) {
  return imm | ((seq & kSeqMask) << kCountBits);
}
inline Kind kind(uint32_t imm) { return static_cast<Kind>(imm >> 30); }
inline uint32_t seq(uint32_t imm) { return (imm >> kCountBits) & kSeqMask; }
inline uint64_t count(uint32_t imm) { return imm & kMaxCount; }
}  // namespace ibimm

// What a peer needs to connect to one of our queue pairs (exchanged through
// the bootstrap; fixed layout, host byte order: both ends run the same build).
// The credit page (creditAddr, creditRkey) holds, in 64-bit words: [0] the
// credit written by the peer, [1] our credit as we write it, [2..3] the CTS we
// send, [4..5] the CTS slot the peer writes.
struct IbEndpoint {
  uint32_t qpn;
  uint32_t psn;
  uint8_t gid[16];
  uint16_t lid;
  uint16_t pad;
  uint32_t ringRkey;
  uint64_t ringAddr;
  uint64_t ringBytes;
  uint64_t creditAddr;
  uint32_t creditRkey;
  uint32_t mtu;
  // WEFT_IB_RDMACM=1 (ib_cm_connect.h): qpn and psn are unused; the rank's
  // rdma_cm listener is at cmAddr (IPv4 as ::ffff:a.b.c.d) port cmPort (host
  // order), and connect requests to it must carry cmNonce.
  uint8_t cmAddr[16];
  uint32_t cmPort;
  uint32_t cmNonce;
};

class IbConnection : public Channel, public RemoteWrites {
 public:
  // `cache` registers user buffers for zero-copy; `zcopyMin` is the smallest
  // send that uses it (0: never; the receive side always follows the sender).
  IbConnection(IbDevice* dev, std::string peer, size_t ringBytes, int deathFd, RegCache* cache,
               size_t zcopyMin);
  ~IbConnection() override;
  // Bootstrap path: buffers, CQs and a QP in INIT; *local is what the peer needs.
  weftResult_t create(IbEndpoint* local);
  // Bootstrap path: setRemote(), then the QP to RTR and RTS.
  weftResult_t connect(const IbEndpoint& remote);
  // rdma_cm path: buffers and CQs only (*local without QPN and PSN); the QP
  // is made by rdma_create_qp() on qpInitAttr() and handed over by adoptCmQp().
  weftResult_t createBuffers(IbEndpoint* local);
  ibv_qp_init_attr qpInitAttr(uint32_t inlineBytes);
  // `id` holds our QP (in INIT, made with `maxInline` inline bytes); from now
  // on the connection owns the id (disconnects and destroys it, QP first) and
  // posts its receives, before rdma_connect()/rdma_accept() move the QP on.
  weftResult_t adoptCmQp(rdma_cm_id* id, uint32_t maxInline);
  // The peer's ring and credit word; fails unless its ring is as big as ours.
  weftResult_t setRemote(const IbEndpoint& remote);

  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  // The ring bytes that arrived and were not consumed (Channel::tryPeek); a
  // zero-copy send next on the QP cannot be peeked (weftInvalidUsage).
  weftResult_t tryPeek(void* data, size_t bytes, size_t* got) override;
  // A plain RDMA WRITE into the peer's registered memory (RemoteWrites),
  // queued before whatever this QP sends next: RC executes a QP's requests in
  // order, so the receive completion of a later WRITE_WITH_IMM means the
  // write's data is placed. *posted false: the send queue is full.
  RemoteWrites* remoteWrites() override { return this; }
  weftResult_t tryPut(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                      size_t bytes, bool* posted) override;
  // Completion queues are polled, not slept on (ChannelWake::Via::kRetry):
  // the executor yields between passes while a verbs channel is pending.
  ChannelWake wake() const override { return {}; }
  const std::string& peerName() const override { return peer_; }
  const std::string& peer() const { return peer_; }
  uint64_t zcopyBytes() const { return zcBytes_; }  // sent zero-copy
  uint64_t zcopyWrites() const { return zcWrites_; }

 private:
  static constexpr size_t kMaxCts = 1 << 20;  // bytes one CTS offers (and the bounce buffer)
  weftResult_t sendOnce(const void* data, size_t bytes, size_t* moved);
  weftResult_t recvOnce(void* data, size_t bytes, size_t* moved);
  weftResult_t remember(weftResult_t r);
  weftResult_t postInitialRecvs();
  // imm < 0: a plain WRITE; `track`: always signalled, marked as a DATA write.
  weftResult_t postWrite(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, uint32_t rkey,
                         size_t bytes, int64_t imm, bool inlineData, bool track = false);
  // Zero-copy (ib_rendezvous.cc).
  weftResult_t startZeroCopy(const void* data, size_t bytes);
  weftResult_t sendZeroCopy(const void* data, size_t bytes, size_t* moved);
  weftResult_t recvZeroCopy(void* data, size_t bytes, size_t* moved);
  weftResult_t postCts(void* data, size_t bytes);
  weftResult_t sqRoom();
  weftResult_t reapSends();
  weftResult_t reapRecvs();
  weftResult_t returnCredit(bool force);
  weftResult_t checkPeerAlive();
  weftResult_t completionError(const ibv_wc& wc, const char* what);

  IbDevice* dev_;
  std::string peer_;
  size_t ringBytes_;
  int deathFd_;  // the peer's TCP socket: EOF means it is gone
  ibv_cq* sendCq_ = nullptr;
  ibv_cq* recvCq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  rdma_cm_id* cmId_ = nullptr;  // rdma_cm path: owns qp_
  uint32_t sendPsn_ = 0;
  unsigned char* ring_ = nullptr;     // where the peer writes to us
  unsigned char* staging_ = nullptr;  // what we write to the peer from
  uint64_t* words_ = nullptr;         // [0] credit from the peer, [1] our consumed count
  ibv_mr* ringMr_ = nullptr;
  ibv_mr* stagingMr_ = nullptr;
  ibv_mr* wordsMr_ = nullptr;
  IbEndpoint remote_{};
  uint32_t sqDepth_ = 256;
  uint32_t rqDepth_ = 512;
  uint32_t maxInline_ = 0;
  uint32_t unsignaled_ = 0;  // work requests posted since the last signalled one
  uint32_t sqUsed_ = 0;      // work requests not yet retired
  uint64_t sent_ = 0;        // ring bytes written to the peer
  uint64_t consumed_ = 0;    // ring bytes consumed from our ring
  uint64_t creditSent_ = 0;  // consumed_ as last written to the peer
  uint32_t idlePolls_ = 0;
  uint64_t immSent_ = 0;  // WRITE_WITH_IMMs posted (their sequence numbers)
  uint64_t immSeen_ = 0;  // WRITE_WITH_IMM completions received
  // What has arrived and is not consumed yet, in stream order: ring bytes, or
  // the rest of an RTS (bytes still to come zero-copy).
  struct Segment {
    bool zcopy;
    uint64_t bytes;
  };
  std::deque<Segment> segs_;
  RegCache* cache_;
  size_t zcMin_;
  // Receive side of the rendezvous: the CTS outstanding.
  uint64_t ctsLeft_ = 0;    // bytes of it not yet reported to the caller
  uint64_t ctsDone_ = 0;    // bytes of it reported
  uint64_t zcArrived_ = 0;  // DATA bytes arrived and not yet reported
  char* ctsDst_ = nullptr;  // the caller's buffer it advertised
  bool ctsBounce_ = false;  // it advertised bounce_ instead
  const RegCache::Entry* recvEntry_ = nullptr;
  unsigned char* bounce_ = nullptr;
  ibv_mr* bounceMr_ = nullptr;
  // Send side: the RTS in progress, the CTS we write to, the DATA write in flight.
  uint64_t zcLeft_ = 0;
  const RegCache::Entry* sendEntry_ = nullptr;
  bool ctsValid_ = false;
  uint64_t ctsAddr_ = 0, ctsUsed_ = 0;
  uint32_t ctsRkey_ = 0, ctsLen_ = 0;
  const char* inflightSrc_ = nullptr;
  size_t inflightBytes_ = 0;
  bool inflightDone_ = false;
  uint64_t zcBytes_ = 0, zcWrites_ = 0;
  // The first error is sticky: an error completion is consumed by the poll
  // that saw it, so a caller that drops one error (an eager send that leaves
  // reporting to the engine) must meet it again on its next call.
  weftResult_t failed_ = weftSuccess;
  std::string failure_;
};

}  // namespace weft
