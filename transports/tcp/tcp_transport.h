// TCP transport: a full mesh of non-blocking TCP_NODELAY sockets, `nstreams`
// per peer pair, opened through the bootstrap's authenticated connections.
// By default each stream is two connections, one per direction: a sendmsg()
// holds its socket's lock while it copies, and data arriving for that socket
// meanwhile waits in the socket's backlog, so one connection carrying both
// directions made each rank's sends delay its own receives (2-rank loopback
// allreduce of 1-16 MiB ran 1.2-1.5x slower that way). With one connection
// per stream (WEFT_SOCKET_PER_DIRECTION=0, half the descriptors) it carries
// both the stream's send and receive channel.
// Chunks are striped over the streams by the executor for bandwidth. The
// kernel's send-buffer autotuning is left alone (fixing SO_SNDBUF is what
// makes Gloo stall on delayed ACKs; see shared/peers/RESULTS.md, finding 4).
// Sends that the schedule marks stable may go by reference (splice_sender.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transports/channel.h"
#include "transports/tcp/splice_sender.h"

namespace weft {

class TcpChannel : public Channel {
 public:
  // spliceMin: smallest stable send passed by reference (0: never).
  TcpChannel(int fd, std::string peer, size_t spliceMin = 0)
      : fd_(fd), peer_(std::move(peer)), spliceMin_(spliceMin) {}
  ~TcpChannel() override;
  weftResult_t trySend(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t trySendStable(const void* data, size_t bytes, size_t* moved) override;
  weftResult_t tryRecv(void* data, size_t bytes, size_t* moved) override;
  int waitFd() const override { return fd_; }
  const std::string& peerName() const override { return peer_; }
  // Bytes of a stable send still in the pipe: they go before anything else.
  size_t pendingByReference() const { return splice_ ? splice_->pending() : 0; }

 private:
  // Small reads go through a read-ahead buffer: a call header and a message
  // of up to 16 KiB behind it (one TCP segment) cost one recv, not two. Every
  // reader of this stream goes through tryRecv, which serves buffered bytes
  // first, so the engine never sleeps on the socket while bytes wait here.
  // 16 KiB rather than 4: 4-16 KiB allreduces over loopback ran 5-10% faster
  // (2 ranks, 6 alternating runs); the buffer is made on a channel's first
  // small read, so a rank pays it only for peers that send it headers.
  static constexpr size_t kReadAhead = (16 << 10) + 256;
  static constexpr size_t kSmallRead = 1024;
  int fd_;  // owned by TcpTransport
  std::string peer_;
  std::unique_ptr<char[]> ahead_;
  size_t aheadPos_ = 0, aheadEnd_ = 0;
  size_t spliceMin_;
  std::unique_ptr<SpliceSender> splice_;  // made on the first stable send that qualifies
};

class TcpTransport : public ChannelTable {
 public:
  ~TcpTransport() override;
  // spliceMin: WEFT_SOCKET_SPLICE, the smallest send passed by reference;
  // perDirection: two connections per stream (one each way) instead of one.
  weftResult_t connectAll(Bootstrap& bootstrap, int nstreams, size_t spliceMin = 0,
                          bool perDirection = true);
  int nstreams() const override { return nstreams_; }
  Channel* sendChannel(int peer, int stream) override { return send_[peer][stream].get(); }
  Channel* recvChannel(int peer, int stream) override { return recv_[peer][stream].get(); }
  // The connection `peer` sends this rank `stream`'s data on. Other
  // transports watch it for the peer's end of file (its death).
  int socketFd(int peer, int stream) const { return fds_[peer][stream * ways_ + inbound_[peer]]; }
  // Unblocks every pending operation with an error (abort).
  void shutdownAll();

 private:
  int nstreams_ = 0;
  int ways_ = 1;  // connections per stream: 2 with one per direction
  // [peer][stream * ways_ + d]; with two ways, d = 0 carries the lower rank's
  // data to the higher one, d = 1 the other way.
  std::vector<std::vector<int>> fds_;
  std::vector<int> inbound_, outbound_;  // [peer]: the d this rank receives / sends on
  std::vector<std::vector<std::unique_ptr<TcpChannel>>> send_, recv_;
};

}  // namespace weft
