// See ib_cm_connect.h.
#include "transports/ib/ib_cm_connect.h"

#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <random>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "transports/ib/ib_cm_addr.h"

namespace weft {
namespace {

// What a slot in each Step waits for (the Step enum's order).
const char* stepName(int step) {
  static const char* const names[] = {"rdma_resolve_addr",   "rdma_resolve_route", "rdma_connect",
                                      "its connect request", "rdma_accept",        "done"};
  return names[step];
}

// An event's status: a negative errno, or for REJECTED the IB CM reason.
std::string statusText(rdma_cm_event_type type, int status) {
  char text[128];
  if (type == RDMA_CM_EVENT_REJECTED)
    std::snprintf(text, sizeof(text), "reject reason %d%s", status,
                  status == 8    ? " (no listener on that port)"
                  : status == 28 ? " (refused by the peer)"
                                 : "");
  else if (status < 0)
    std::snprintf(text, sizeof(text), "status %d (%s)", status, strerror(-status));
  else
    std::snprintf(text, sizeof(text), "status %d", status);
  return text;
}

}  // namespace

struct IbCmConnector::Event {
  rdma_cm_event_type type;
  int status;
  rdma_cm_id* id;
  uint8_t data[kCmHelloBytes];
  size_t dataBytes;
};

IbCmConnector::IbCmConnector(IbDevice* dev, int rank, double timeoutSec)
    : dev_(dev), rank_(rank), timeoutSec_(timeoutSec) {}

IbCmConnector::~IbCmConnector() {
  // Ids with a QP belong to their connections (destroyed before us); these never got one.
  for (auto& s : slots_)
    if (s->id != nullptr && !s->adopted) rdma_destroy_id(s->id);
  if (listener_ != nullptr) rdma_destroy_id(listener_);
  if (channel_ != nullptr) rdma_destroy_event_channel(channel_);
}

int IbCmConnector::msLeft() const { return std::max(1, deadline_.remainingMs(INT_MAX)); }

// WEFT_IB_TC as the IP type of service (the RoCE v2 traffic class), set before
// the route is resolved; WEFT_IB_TIMEOUT as the ACK timeout, set before the QP
// reaches RTS. A kernel without the ACK-timeout option keeps its own (from the
// route): not worth failing over.
void IbCmConnector::tuneId(rdma_cm_id* id, bool beforeRoute) {
  if (beforeRoute) {
    uint8_t tos = static_cast<uint8_t>(configInt("WEFT_IB_TC"));
    if (tos != 0 && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0)
      WEFT_WARN(NET, "rank %d: rdma_cm ignores WEFT_IB_TC=%u: %s", rank_, tos, strerror(errno));
    return;
  }
  uint8_t ack = static_cast<uint8_t>(configInt("WEFT_IB_TIMEOUT"));
  rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof(ack));
}

weftResult_t IbCmConnector::listen() {
  WEFT_CHECK(cmLocalAddress(*dev_, &local_));
  channel_ = rdma_create_event_channel();
  if (channel_ == nullptr)
    return setError(weftSystemError,
                    "WEFT_IB_RDMACM=1: rdma_create_event_channel failed: %s (is the rdma_ucm "
                    "module loaded and /dev/infiniband/rdma_cm there?)",
                    strerror(errno));
  // Non-blocking: rdma_get_cm_event() then returns EAGAIN and we poll() with a deadline.
  const int flags = fcntl(channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return setError(weftSystemError, "rdma_cm event channel: fcntl failed: %s", strerror(errno));
  const std::string at = sockaddrText(reinterpret_cast<sockaddr*>(&local_));
  if (rdma_create_id(channel_, &listener_, nullptr, RDMA_PS_TCP) != 0)
    return setError(weftSystemError, "rdma_create_id failed: %s", strerror(errno));
  tuneId(listener_, true);
  if (rdma_bind_addr(listener_, reinterpret_cast<sockaddr*>(&local_)) != 0)
    return setError(weftSystemError, "rdma_bind_addr to %s (%s) failed: %s", at.c_str(),
                    dev_->describe().c_str(), strerror(errno));
  if (listener_->verbs != dev_->context())
    return setError(weftSystemError, "rdma_cm: %s belongs to RDMA device %s, not to %s", at.c_str(),
                    listener_->verbs ? ibv_get_device_name(listener_->verbs->device) : "(none)",
                    dev_->name().c_str());
  if (rdma_listen(listener_, 0) != 0)  // 0: the kernel's largest backlog
    return setError(weftSystemError, "rdma_listen on %s failed: %s", at.c_str(), strerror(errno));
  port_ = ntohs(rdma_get_src_port(listener_));
  std::random_device rd;
  nonce_ = rd();
  uint8_t raw[16];
  sockaddr_storage shown;
  std::string why;
  sockaddrToGidForm(reinterpret_cast<sockaddr*>(&local_), raw);
  gidToSockaddr(raw, port_, &shown, &why);
  listenText_ = sockaddrText(reinterpret_cast<sockaddr*>(&shown));
  return weftSuccess;
}

void IbCmConnector::describe(IbEndpoint* ep) const {
  sockaddrToGidForm(reinterpret_cast<const sockaddr*>(&local_), ep->cmAddr);
  ep->cmPort = port_;
  ep->cmNonce = nonce_;
}

weftResult_t IbCmConnector::failed(const Slot& s, const char* step, const char* what) {
  return setError(weftRemoteError, "rdma_cm: %s for QP %d with %s failed: %s", step, s.t.index,
                  s.t.peerName.c_str(), what);
}

weftResult_t IbCmConnector::startConnect(Slot* s) {
  sockaddr_storage dst;
  std::string why;
  if (!gidToSockaddr(s->t.remote.cmAddr, static_cast<uint16_t>(s->t.remote.cmPort), &dst, &why))
    return failed(*s, "rdma_resolve_addr", ("the peer sent no usable address: " + why).c_str());
  if (rdma_create_id(channel_, &s->id, s, RDMA_PS_TCP) != 0)
    return failed(*s, "rdma_create_id", strerror(errno));
  tuneId(s->id, true);
  s->step = Step::kResolveAddr;
  if (rdma_resolve_addr(s->id, reinterpret_cast<sockaddr*>(&local_),
                        reinterpret_cast<sockaddr*>(&dst), msLeft()) != 0)
    return failed(*s, "rdma_resolve_addr", strerror(errno));
  return weftSuccess;
}

// The QP on the id's context (which must be ours: the PD and CQs live there),
// with inline sends where the device offers them, handed to its connection.
weftResult_t IbCmConnector::createQp(Slot* s, rdma_cm_id* id) {
  if (id->verbs != dev_->context())
    return failed(*s, "rdma_create_qp", "rdma_cm routed it over another RDMA device");
  tuneId(id, false);
  for (uint32_t inl : {64u, 0u}) {
    ibv_qp_init_attr attr = s->t.conn->qpInitAttr(inl);
    if (rdma_create_qp(id, dev_->pd(), &attr) != 0) continue;
    s->adopted = true;
    return s->t.conn->adoptCmQp(id, attr.cap.max_inline_data);
  }
  return failed(*s, "rdma_create_qp", strerror(errno));
}

weftResult_t IbCmConnector::nextEvent(Event* e, const Deadline& deadline) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(channel_, &ev) == 0) {
      e->type = ev->event;
      e->status = ev->status;
      e->id = ev->id;
      e->dataBytes = std::min<size_t>(ev->param.conn.private_data_len, kCmHelloBytes);
      if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->param.conn.private_data != nullptr)
        std::memcpy(e->data, ev->param.conn.private_data, e->dataBytes);
      else
        e->dataBytes = 0;
      rdma_ack_cm_event(ev);  // at once: rdma_destroy_id() waits for every event acknowledged
      return weftSuccess;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return setError(weftSystemError, "rdma_get_cm_event failed: %s", strerror(errno));
    if (deadline.expired()) {
      for (auto& s : slots_)
        if (s->step != Step::kDone)
          return setError(weftTimeout,
                          "rdma_cm: QP %d with %s not connected within WEFT_TIMEOUT=%g s (waiting "
                          "for %s)",
                          s->t.index, s->t.peerName.c_str(), timeoutSec_,
                          stepName(static_cast<int>(s->step)));
      return setError(weftTimeout, "rdma_cm: no event within WEFT_TIMEOUT=%g s", timeoutSec_);
    }
    pollfd pfd{channel_->fd, POLLIN, 0};
    poll(&pfd, 1, deadline.remainingMs(1000) + 1);
  }
}

weftResult_t IbCmConnector::onRequest(const Event& e) {
  CmHello h;
  std::string why = "no weft hello in its private data";
  Slot* slot = nullptr;
  if (decodeCmHello(e.data, e.dataBytes, &h) && book_->claim(h, &why))
    for (auto& s : slots_)
      if (!s->active && s->t.peer == static_cast<int>(h.rank) &&
          s->t.index == static_cast<int>(h.index))
        slot = s.get();
  if (slot == nullptr) {  // not ours (a stray client, another communicator): refuse, go on
    WEFT_WARN(NET, "rank %d: refused an rdma_cm connect request on %s: %s", rank_,
              listenText_.c_str(), why.c_str());
    rdma_reject(e.id, nullptr, 0);
    rdma_destroy_id(e.id);
    return weftSuccess;
  }
  slot->id = e.id;
  e.id->context = slot;  // it inherited the listener's (none)
  slot->step = Step::kAccept;
  WEFT_CHECK(createQp(slot, e.id));
  rdma_conn_param param{};
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = static_cast<uint8_t>(std::min<int64_t>(configInt("WEFT_IB_RETRY_CNT"), 7));
  param.rnr_retry_count = 7;  // receives are reposted as they are polled: wait, never fail
  if (rdma_accept(e.id, &param) != 0) return failed(*slot, "rdma_accept", strerror(errno));
  return weftSuccess;
}

weftResult_t IbCmConnector::handle(const Event& e, int* left) {
  if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) return onRequest(e);
  Slot* s = static_cast<Slot*>(e.id->context);
  if (s == nullptr) {  // the listener's own
    if (e.type == RDMA_CM_EVENT_DEVICE_REMOVAL || e.type == RDMA_CM_EVENT_ADDR_CHANGE)
      return setError(weftSystemError, "rdma_cm: %s on the listener %s", rdma_event_str(e.type),
                      listenText_.c_str());
    return weftSuccess;
  }
  const std::string what =
      std::string(rdma_event_str(e.type)) + ", " + statusText(e.type, e.status);
  switch (e.type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      s->step = Step::kResolveRoute;
      if (rdma_resolve_route(s->id, msLeft()) != 0)
        return failed(*s, "rdma_resolve_route", strerror(errno));
      return weftSuccess;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      WEFT_CHECK(createQp(s, s->id));
      s->step = Step::kConnect;
      uint8_t hello[kCmHelloBytes];
      CmHello h;
      h.rank = static_cast<uint32_t>(rank_);
      h.index = static_cast<uint32_t>(s->t.index);
      h.nonce = s->t.remote.cmNonce;
      encodeCmHello(h, hello);
      rdma_conn_param param{};
      param.private_data = hello;
      param.private_data_len = sizeof(hello);
      param.responder_resources = 1;
      param.initiator_depth = 1;
      param.retry_count =
          static_cast<uint8_t>(std::min<int64_t>(configInt("WEFT_IB_RETRY_CNT"), 7));
      param.rnr_retry_count = 7;
      if (rdma_connect(s->id, &param) != 0) return failed(*s, "rdma_connect", strerror(errno));
      return weftSuccess;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      if (s->step != Step::kDone) --*left;
      s->step = Step::kDone;
      return weftSuccess;
    case RDMA_CM_EVENT_ADDR_ERROR:
      return failed(*s, "rdma_resolve_addr", what.c_str());
    case RDMA_CM_EVENT_ROUTE_ERROR:
      return failed(*s, "rdma_resolve_route", what.c_str());
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
      return failed(*s, s->active ? "rdma_connect" : "rdma_accept", what.c_str());
    case RDMA_CM_EVENT_DISCONNECTED:  // the peer gave up (or died) while we set up
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
    case RDMA_CM_EVENT_ADDR_CHANGE:
      return failed(*s, "connection setup", what.c_str());
    default:  // TIMEWAIT_EXIT and the like: nothing to do
      return weftSuccess;
  }
}

weftResult_t IbCmConnector::connectAll(const std::vector<Target>& targets) {
  deadline_ = Deadline::after(timeoutSec_);
  std::vector<int> expected;
  int accepted = 0;
  for (const Target& t : targets) {
    slots_.push_back(std::make_unique<Slot>());
    Slot* s = slots_.back().get();
    s->t = t;
    s->active = rank_ < t.peer;  // the lower rank of a pair connects
    if (!s->active) {
      if (static_cast<int>(expected.size()) <= t.peer) expected.resize(t.peer + 1, 0);
      ++expected[t.peer];
      ++accepted;
    }
  }
  book_ = std::make_unique<CmRequestBook>(expected, nonce_);
  for (auto& s : slots_)
    if (s->active) WEFT_CHECK(startConnect(s.get()));
  int left = static_cast<int>(slots_.size());
  while (left > 0) {
    Event e{};
    WEFT_CHECK(nextEvent(&e, deadline_));
    WEFT_CHECK(handle(e, &left));
  }
  WEFT_INFO(NET, "rank %d: %zu QP(s) connected via rdma_cm (%zu connected, %d accepted on %s)",
            rank_, slots_.size(), slots_.size() - accepted, accepted, listenText_.c_str());
  return weftSuccess;
}

}  // namespace weft
