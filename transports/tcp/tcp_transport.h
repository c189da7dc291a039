// TCP transport: non-blocking TCP_NODELAY sockets to every peer met,
// `nstreams` per peer pair, opened through the bootstrap's authenticated
// connections.
// Each stream has a connection A, which carries both directions, and by
// default more: B carries the higher rank's data to the lower one and C the
// other way, in large calls only ("bulk" mode, set per call), each as
// WEFT_SOCKET_LANES connections that the data is striped over (transports/striped_channel.h).
// Why connections per direction for bulk data: a sendmsg() holds its socket's lock
// while it copies, and data arriving for that socket meanwhile waits in the
// socket's backlog, so over one connection each rank's sends delayed its own
// receives. Why small calls stay on A: data one way only is answered by pure
// ACKs, which on a shared connection ride on the reply. Why not A for one bulk
// direction: small calls leave A's ends in interactive (delayed-ACK) mode,
// which slows bulk data on A against fresh connections (docs/tuning.md, "TCP
// connections: one shared, lanes per direction for large calls"). Point-to-point
// calls and every call header stay on A, so ranks that disagree on a call's
// size still meet on one byte stream and see the mismatch.
// WEFT_SOCKET_PER_DIRECTION=0 opens A only.
// Connection A to a peer is made at the pair's first exchange
// (lazy_connection.h; WEFT_RUNTIME_CONNECT=0: to every peer at init), or at
// init where another transport watches the peer's death on it (shared
// memory's local peers, verbs' peers: connectNow); a peer's B and C lanes on the first
// large call that uses that peer, so a rank holds lanes only to the peers its
// algorithms move bulk data with (a ring's two neighbours, not all n). Until
// then a large call gets a stand-in channel: the lower rank of the pair
// connects the lanes in its prepare() (the flow engine prepares a plan's
// channels after the call headers went out, before any byte of it moves;
// connects complete against the peer's listener, so that waits on nobody),
// and the higher rank takes them as they arrive, never waiting: its stand-in
// moves nothing until all are there, while the engine goes on with the call's
// other flows. So a peer that called something else is found out by its call
// header, as before, and a dead one by connection A's end.
// Chunks are striped over the streams by the executor for bandwidth. The
// kernel's send-buffer autotuning is left alone (fixing SO_SNDBUF is what
// makes Gloo stall on delayed ACKs).
// Sends that the schedule marks stable may go by reference (splice_sender.h).
// Connections inside one host run Reno by default (tcp_congestion.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transports/channel.h"
#include "transports/tcp/lazy_connection.h"
#include "transports/tcp/stand_in_channel.h"
#include "transports/tcp/tcp_channel.h"
#include "transports/tcp/tcp_congestion.h"
#include "transports/tcp/tcp_options.h"
#include "transports/transport.h"
#include "transports/transport_setup.h"

namespace weft {

class TcpTransport : public ChannelTable, public Transport {
 public:
  ~TcpTransport() override;
  const char* name() const override { return "tcp"; }
  bool reaches(int) const override { return true; }  // any peer, connected on first use
  Channel* headerSendChannel(int peer, int stream) override {
    return sendChannelSmall(peer, stream);
  }
  Channel* headerRecvChannel(int peer, int stream) override {
    return recvChannelSmall(peer, stream);
  }
  void beginCall(size_t bytesPerRank) override {
    setBulk(bulkMin_ > 0 && bytesPerRank >= bulkMin_);
  }
  void endCall() override { setBulk(false); }
  // A wide plan's bulk channels are each peer's first lane alone (channel.h).
  // Both ends of a pair bypass the striping alike, so the lanes' byte streams
  // stay in step: a call leaves no stream byte half read.
  void setWide(bool wide) override { wide_ = wide; }
  // Sets the transport up: connection A to every peer now without
  // options.onUse, else on first use or when connectNow asks for it.
  weftResult_t connectAll(Bootstrap& bootstrap, const TcpOptions& options);
  // Connection A now to every peer marked in `peers` that has none from
  // init yet: collective over those pairs (both ends must mark each other),
  // for transports that watch a peer's death on it (socketFd).
  weftResult_t connectNow(const std::vector<bool>& peers);
  int nstreams() const override { return nstreams_; }
  // The channels of the mode set by setBulk.
  Channel* sendChannel(int peer, int stream) override {
    return channelFor(peer, stream, bulk_, wide_, 0);
  }
  Channel* recvChannel(int peer, int stream) override {
    return channelFor(peer, stream, bulk_, wide_, 1);
  }
  // The channels of small calls, whatever the mode: where call headers go.
  Channel* sendChannelSmall(int peer, int stream) {
    return channelFor(peer, stream, false, false, 0);
  }
  Channel* recvChannelSmall(int peer, int stream) {
    return channelFor(peer, stream, false, false, 1);
  }
  // Bulk mode: data goes on B and C. Every rank of a call
  // must set the same (it follows from the call's size); only the thread
  // running the communicator's calls sets and reads it.
  void setBulk(bool bulk) { bulk_ = bulk && lanes_ > 0; }
  // Connection A of `peer` and `stream` (-1 while a connection on first use
  // is not made): other transports watch it for the peer's end of file (its
  // death), which needs one made at init (connectNow).
  int socketFd(int peer, int stream) const { return fds_[peer][stream * ways_].load(); }
  // Connections open now (A to the peers met, lanes to those used in bulk).
  int openConnections() const;
  // Unblocks every pending operation with an error (abort).
  void shutdownAll();

 private:
  // [peer][stream]: the channels of one stream, each one object per socket
  // and direction (an object keeps that byte stream's read-ahead and splice
  // state, so two objects must never share one).
  struct Stream {
    // [0] connection A, [1] the bulk lanes (striped), [2] the first lane alone (wide).
    Channel* send[3] = {nullptr, nullptr, nullptr};
    Channel* recv[3] = {nullptr, nullptr, nullptr};
    Channel* standIn[2][2] = {};  // [wide][dir]: until the lanes are open
  };
  Channel* channelFor(int peer, int stream, bool bulk, bool wide, int dir) {
    Stream& st = streams_[peer][stream];
    if (st.send[0] == nullptr) makeLazy(peer);
    const int way = bulk ? (wide ? 2 : 1) : 0;
    if (bulk && !lanesDone_[peer]) {
      Channel*& stand = st.standIn[wide][dir];
      if (stand == nullptr)
        stand = own(std::make_unique<LaneStandIn>(this, peer, stream, way, dir));
      return stand;
    }
    return dir == 0 ? st.send[way] : st.recv[way];
  }
  // The channels of connection A to `peer`, made on first use.
  void makeLazy(int peer);
  // Opens the B and C lanes of every stream to `peer` as far as it can
  // without waiting for the peer (the lower rank connects them all, the
  // higher takes those that arrived); true once they are all open, or failed
  // (then the peer's bulk channels fail every move with the reason).
  bool advanceLanes(int peer);
  // The lane channels of `peer`, once all its lanes are open.
  void buildLanes(int peer);
  void failLanes(int peer, const std::string& why);
  // A large call's channel to a peer whose lanes are not open yet: it
  // advances them (prepare and every move) and moves nothing until they are.
  class LaneStandIn : public StandInChannel {
   public:
    LaneStandIn(TcpTransport* t, int peer, int stream, int way, int dir)
        : t_(t), peer_(peer), stream_(stream), way_(way), dir_(dir) {}
    const std::string& peerName() const override;

   private:
    // Advances the lanes (a failure becomes their FailedChannel, not an error).
    weftResult_t target(bool, Channel** out) override;
    Channel* opened() const override;
    ChannelWake waitWake() const override;
    Channel* lane() const;  // the lane channel, once lanesDone_
    TcpTransport* t_;
    int peer_, stream_, way_, dir_;
  };
  // Sets the congestion control of a lane connection opened after init.
  weftResult_t tune(int fd);
  // Connection A, made at init or on first use: closed in forked children
  // (the peers, and other transports' death watch on it, must see this
  // process die while a child lives), and its congestion control set.
  weftResult_t settle(int fd, CongestionOutcome* got);
  Channel* own(std::unique_ptr<Channel> ch) {
    owned_.push_back(std::move(ch));
    return owned_.back().get();
  }
  int nstreams_ = 0;
  int lanes_ = 0;  // connections per bulk direction (0: no B and C)
  int ways_ = 1;   // connections per stream: A, then B's lanes, then C's
  bool bulk_ = false;
  bool wide_ = false;
  size_t bulkMin_ = 0;
  size_t spliceMin_ = 0;
  std::string congestion_;
  Bootstrap* bs_ = nullptr;  // outlives this transport (the communicator's)
  // [peer][stream * ways_ + (0: A, 1..L: B, L+1..2L: C)]; atomic because
  // shutdownAll (abort, from any thread) reads them while lanes are opened.
  std::vector<std::unique_ptr<std::atomic<int>[]>> fds_;
  // [peer][stream]: the higher rank's offer of connection A (lazy_connection.h).
  std::vector<std::unique_ptr<std::atomic<int>[]>> offers_;
  std::vector<char> atInit_;  // [peer]: connection A made at init (connectNow)
  // [peer][stream]: connection A made on first use (the peers met only).
  std::vector<std::unique_ptr<std::unique_ptr<LazyConnection>[]>> lazy_;
  std::vector<char> lanesDone_;  // [peer]: lanes open or failed (the calls' thread only)
  std::vector<std::vector<Stream>> streams_;
  std::vector<std::unique_ptr<Channel>> owned_;
};

// The registry's set-up (transport_setup.h): the full mesh, with
// setup.options.tcp; also sets setup.tcp.
weftResult_t setUpTcpTransport(TransportSetup& setup, std::unique_ptr<Transport>* made);

}  // namespace weft
