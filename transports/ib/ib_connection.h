// One reliable-connected queue pair to a peer, carrying a byte stream in each
// direction as the channel contract asks (transports/channel.h).
//
// Wire protocol, sender -> receiver:
//   - the receiver owns a ring of `ringBytes` registered for remote write; the
//     sender copies bytes into its own registered staging ring (at the same
//     offset) and RDMA-WRITEs them WITH_IMM to ring[sent % ringBytes]; the
//     immediate carries the byte count, and the receive completion is how the
//     receiver learns that the bytes are in place (RC delivers a WRITE_WITH_IMM
//     completion only after its data, so no polling of the data itself);
//   - credits: after consuming, the receiver RDMA-WRITEs its 64-bit consumed
//     byte count into the sender's credit word (a plain aligned 8-byte write; a
//     stale read only delays the sender). The sender may have at most
//     ringBytes - (sent - consumed) bytes in flight, which also frees its
//     staging: the peer consumed them, so the HCA had read them.
// Send-queue accounting: every 16th work request (and any that fills the queue)
// is signalled; a signalled completion retires itself and the unsignalled ones
// before it. Small messages are sent inline (no staging copy).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "transports/channel.h"
#include "transports/ib/ib_device.h"

namespace weft {

// What a peer needs to connect to one of our queue pairs (exchanged through
// the bootstrap; fixed layout, host byte order: both ends run the same build).
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
};

class IbConnection {
 public:
  IbConnection(IbDevice* dev, std::string peer, size_t ringBytes, int deathFd);
  ~IbConnection();
  weftResult_t create(IbEndpoint* local);
  weftResult_t connect(const IbEndpoint& remote);

  weftResult_t trySend(const void* data, size_t bytes, size_t* moved);
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved);
  const std::string& peer() const { return peer_; }
  Channel* sendChannel() { return sendSide_.get(); }
  Channel* recvChannel() { return recvSide_.get(); }

 private:
  weftResult_t sendOnce(const void* data, size_t bytes, size_t* moved);
  weftResult_t recvOnce(void* data, size_t bytes, size_t* moved);
  weftResult_t remember(weftResult_t r);
  weftResult_t postWrite(uint64_t localAddr, uint32_t lkey, uint64_t remoteAddr, size_t bytes,
                         bool withImm, bool inlineData);
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
  uint64_t sent_ = 0;        // bytes written to the peer
  uint64_t available_ = 0;   // bytes arrived and not yet consumed
  uint64_t consumed_ = 0;    // bytes consumed from our ring
  uint64_t creditSent_ = 0;  // consumed_ as last written to the peer
  uint32_t idlePolls_ = 0;
  // The first error is sticky: an error completion is consumed by the poll
  // that saw it, so a caller that drops one error (an eager send that leaves
  // reporting to the engine) must meet it again on its next call.
  weftResult_t failed_ = weftSuccess;
  std::string failure_;
  std::unique_ptr<Channel> sendSide_, recvSide_;
};

}  // namespace weft
