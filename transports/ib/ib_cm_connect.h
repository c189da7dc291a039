// Connection setup through librdmacm (WEFT_IB_RDMACM=1), instead of moving
// QP numbers, PSNs and GIDs through the bootstrap and driving the QPs to RTS
// by hand (ib_connection.cc). Some fabrics want the kernel's connection
// manager: it resolves the route (and so the RoCE path, VLAN, MTU and traffic
// class) the way every other rdma_cm program does, and the CM handshake is
// what switches, firewalls and RoCE tooling expect to see.
//
// Each rank listens on the IP address of its port (ib_cm_addr.h: on RoCE the
// GID weft picked, WEFT_IB_GID_INDEX honoured) with an ephemeral port; address
// and port travel in the endpoints of the bootstrap allgather with the ring addresses, rkeys and
// credit words, which stay there (ib_connection.h: IbEndpoint). For a pair of
// ranks the lower one connects (rdma_resolve_addr, rdma_resolve_route,
// rdma_create_qp, rdma_connect) and the higher one accepts (its listener's
// CONNECT_REQUEST, rdma_create_qp on the new id, rdma_accept); several peers
// and several QPs per pair reach one listener, so each request says which QP
// it is for in its private data (ib_cm_wire.h). Both sides wait for
// ESTABLISHED. All ids share one event channel, polled with a deadline: no step
// waits past WEFT_TIMEOUT, and a failure names the peer, the step and the
// event or status.
//
// Ownership: a QP made with rdma_create_qp() lives on its id, and that id is
// handed to its IbConnection at once (which disconnects and destroys it before
// its CQs). This object keeps the ids that never got a QP, the listener and
// the channel, so it must be destroyed after the connections.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/wait.h"
#include "transports/ib/ib_cm_wire.h"
#include "transports/ib/ib_connection.h"
#include "transports/ib/ib_device.h"

struct rdma_cm_id;
struct rdma_event_channel;

namespace weft {

class IbCmConnector {
 public:
  // One QP to connect: `index` (stream * qpsPerStream + qp) of the pair with `peer`.
  struct Target {
    int peer = -1;
    int index = 0;
    IbConnection* conn = nullptr;
    std::string peerName;
    IbEndpoint remote{};  // cmAddr, cmPort and cmNonce name the peer's listener
  };

  IbCmConnector(IbDevice* dev, int rank, double timeoutSec);
  ~IbCmConnector();
  IbCmConnector(const IbCmConnector&) = delete;
  IbCmConnector& operator=(const IbCmConnector&) = delete;

  // The event channel and the listener on our address, port 0. Fails,
  // advising to unset WEFT_IB_RDMACM or configure an address, where the port
  // has no IP address.
  weftResult_t listen();
  // Writes the listener (address, port, nonce) into an endpoint for the peers.
  void describe(IbEndpoint* ep) const;
  // Connects every target and returns once all are ESTABLISHED.
  weftResult_t connectAll(const std::vector<Target>& targets);

 private:
  enum class Step { kResolveAddr, kResolveRoute, kConnect, kAwaitRequest, kAccept, kDone };
  struct Slot {
    Target t;
    bool active = false;  // we connect (lower rank); else we accept
    Step step = Step::kAwaitRequest;
    rdma_cm_id* id = nullptr;
    bool adopted = false;  // the IbConnection owns id now
  };
  struct Event;  // an event copied out of librdmacm (and acknowledged)

  weftResult_t startConnect(Slot* s);
  weftResult_t createQp(Slot* s, rdma_cm_id* id);
  weftResult_t handle(const Event& e, int* left);
  weftResult_t onRequest(const Event& e);
  weftResult_t nextEvent(Event* e, const Deadline& deadline);
  weftResult_t failed(const Slot& s, const char* step, const char* what);
  void tuneId(rdma_cm_id* id, bool beforeRoute);
  int msLeft() const;

  IbDevice* dev_;
  int rank_;
  double timeoutSec_;
  Deadline deadline_;
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* listener_ = nullptr;
  sockaddr_storage local_{};  // our address, port 0 (the source of our connects)
  std::string listenText_;    // "10.77.0.1:41234"
  uint16_t port_ = 0;
  uint32_t nonce_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // each one an id's context: never moved
  std::unique_ptr<CmRequestBook> book_;
};

}  // namespace weft
