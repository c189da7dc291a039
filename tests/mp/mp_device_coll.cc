// mp_device: every collective on fake device buffers on a stream, against the
// references of mp_values.h: several datatypes and ops, in place and out of
// place, odd counts, every root.
#include <cstring>
#include <string>
#include <vector>

#include "mp_device.h"
#include "mp_values.h"

namespace mpdev {
namespace {

using mp::compareElems;
using mp::dtName;
using mp::dtSize;

std::string name(const char* coll, weftDataType_t dt, size_t count, const char* extra = "") {
  return std::string(coll) + " " + dtName(dt) + " x" + std::to_string(count) + extra;
}

bool allReduce(Ctx& c, weftDataType_t dt, weftRedOp_t op, size_t count, bool inPlace) {
  const size_t b = count * dtSize(dt);
  std::vector<unsigned char> in(b), want(b);
  mp::fillReduceInput(dt, op, c.rank, 0, count, in.data());
  mp::fillReduceExpected(dt, op, c.nranks, 0, count, want.data());
  DevBuf send(b), recv(b);
  send.upload(in.data());
  DevBuf& out = inPlace ? send : recv;
  std::string what = name("allreduce", dt, count, inPlace ? " in-place " : " ") + mp::opName(op);
  if (!callOk(c, what, weftAllReduce(send.p(), out.p(), count, dt, op, c.comm, c.stream)))
    return false;
  sync(c);
  expectSame(c, what, compareElems(dt, out.download().data(), want.data(), count));
  return true;
}

bool allGather(Ctx& c, weftDataType_t dt, size_t count, bool inPlace) {
  const size_t b = count * dtSize(dt);
  DevBuf recv(b * c.nranks), send(b);
  std::vector<unsigned char> want(b * c.nranks);
  for (int r = 0; r < c.nranks; ++r) mp::fillPattern(&want[r * b], b, mp::seedOf(r, count, 1));
  const void* sendp = send.p();
  if (inPlace) {
    recv.upload(&want[c.rank * b], c.rank * b, b);
    sendp = recv.p() + c.rank * b;
  } else {
    send.upload(&want[c.rank * b]);
  }
  std::string what = name("allgather", dt, count, inPlace ? " in-place" : "");
  if (!callOk(c, what, weftAllGather(sendp, recv.p(), count, dt, c.comm, c.stream))) return false;
  sync(c);
  expectSame(c, what, compareElems(weftUint8, recv.download().data(), want.data(), want.size()));
  return true;
}

bool reduceScatter(Ctx& c, weftDataType_t dt, weftRedOp_t op, size_t rc, bool inPlace) {
  const size_t b = rc * dtSize(dt), n = static_cast<size_t>(c.nranks);
  std::vector<unsigned char> in(b * n), want(b);
  mp::fillReduceInput(dt, op, c.rank, 0, rc * n, in.data());
  mp::fillReduceExpected(dt, op, c.nranks, rc * c.rank, rc, want.data());
  DevBuf send(b * n), recv(b);
  send.upload(in.data());
  unsigned char* out = inPlace ? send.p() + c.rank * b : recv.p();
  std::string what = name("reducescatter", dt, rc, inPlace ? " in-place " : " ") + mp::opName(op);
  if (!callOk(c, what, weftReduceScatter(send.p(), out, rc, dt, op, c.comm, c.stream)))
    return false;
  sync(c);
  std::vector<unsigned char> got = inPlace ? send.download(c.rank * b, b) : recv.download();
  expectSame(c, what, compareElems(dt, got.data(), want.data(), rc));
  return true;
}

bool broadcast(Ctx& c, weftDataType_t dt, size_t count, int root, bool inPlace) {
  const size_t b = count * dtSize(dt);
  std::vector<unsigned char> want(b);
  mp::fillPattern(want.data(), b, mp::seedOf(root, count, 2));
  DevBuf send(b), recv(b);
  const void* sendp = nullptr;
  if (inPlace) {
    if (c.rank == root) recv.upload(want.data());
    sendp = recv.p();
  } else if (c.rank == root) {
    send.upload(want.data());
    sendp = send.p();
  }
  std::string what =
      name("broadcast", dt, count, inPlace ? " in-place" : "") + " root " + std::to_string(root);
  if (!callOk(c, what, weftBroadcast(sendp, recv.p(), count, dt, root, c.comm, c.stream)))
    return false;
  sync(c);
  expectSame(c, what, compareElems(weftUint8, recv.download().data(), want.data(), b));
  return true;
}

bool reduce(Ctx& c, weftDataType_t dt, weftRedOp_t op, size_t count, int root, bool inPlace) {
  const size_t b = count * dtSize(dt);
  std::vector<unsigned char> in(b), want(b);
  mp::fillReduceInput(dt, op, c.rank, 0, count, in.data());
  mp::fillReduceExpected(dt, op, c.nranks, 0, count, want.data());
  DevBuf send(b), recv(b);
  send.upload(in.data());
  DevBuf& out = inPlace ? send : recv;
  void* recvp = inPlace || c.rank == root ? out.p() : nullptr;
  std::string what = name("reduce", dt, count, inPlace ? " in-place " : " ") + mp::opName(op) +
                     " root " + std::to_string(root);
  if (!callOk(c, what, weftReduce(send.p(), recvp, count, dt, op, root, c.comm, c.stream)))
    return false;
  sync(c);
  if (c.rank == root)
    expectSame(c, what, compareElems(dt, out.download().data(), want.data(), count));
  else if (!inPlace)
    expectSame(c, what + " (non-root recvbuff untouched)",
               compareElems(weftUint8, recv.download().data(),
                            std::vector<unsigned char>(b, 0x5a).data(), b));
  return true;
}

bool allToAll(Ctx& c, weftDataType_t dt, size_t count) {
  const size_t b = count * dtSize(dt), n = static_cast<size_t>(c.nranks);
  std::vector<unsigned char> in(b * n), want(b * n);
  for (size_t j = 0; j < n; ++j) {
    mp::fillPattern(&in[j * b], b, mp::seedOf(c.rank, j, count, 3));
    mp::fillPattern(&want[j * b], b, mp::seedOf(j, c.rank, count, 3));
  }
  DevBuf send(b * n), recv(b * n);
  send.upload(in.data());
  std::string what = name("alltoall", dt, count);
  if (!callOk(c, what, weftAllToAll(send.p(), recv.p(), count, dt, c.comm, c.stream))) return false;
  sync(c);
  expectSame(c, what, compareElems(weftUint8, recv.download().data(), want.data(), want.size()));
  return true;
}

// Rank 0 sends to rank 1 outside a group (one blocking pair), then a ring.
bool sendRecv(Ctx& c, weftDataType_t dt, size_t count) {
  const size_t b = count * dtSize(dt);
  std::vector<unsigned char> want(b);
  DevBuf buf(b);
  if (c.rank <= 1) {
    mp::fillPattern(want.data(), b, mp::seedOf(0, 1, count, 4));
    if (c.rank == 0) buf.upload(want.data());
    std::string what = name(c.rank == 0 ? "send to 1" : "recv from 0", dt, count);
    weftResult_t r = c.rank == 0 ? weftSend(buf.p(), count, dt, 1, c.comm, c.stream)
                                 : weftRecv(buf.p(), count, dt, 0, c.comm, c.stream);
    if (!callOk(c, what, r)) return false;
    sync(c);
    if (c.rank == 1)
      expectSame(c, what, compareElems(weftUint8, buf.download().data(), want.data(), b));
  }
  return true;
}

bool barrier(Ctx& c) {
  if (!callOk(c, "barrier", weftBarrier(c.comm, c.stream))) return false;
  sync(c);
  return true;
}

}  // namespace

bool checkCollectives(Ctx& c) {
  const size_t counts[] = {1, 7, 1031, 40009};
  const weftRedOp_t allOps[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
  struct TypeOps {
    weftDataType_t dt;
    bool allOps;
  };
  const TypeOps types[] = {{weftInt32, true},    {weftFloat32, true}, {weftFloat64, false},
                           {weftInt8, false},    {weftUint64, false}, {weftFloat16, false},
                           {weftBfloat16, false}};
  for (const TypeOps& t : types) {
    const bool reducible = mp::dtReducible(t.dt);
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        if (reducible) {
          for (weftRedOp_t op : allOps) {
            if (!t.allOps && op != weftSum && op != weftMax) continue;
            if (!allReduce(c, t.dt, op, count, inPlace)) return false;
            if (!reduceScatter(c, t.dt, op, count, inPlace)) return false;
          }
          for (int root : {0, c.nranks - 1})
            if (!reduce(c, t.dt, inPlace ? weftMax : weftSum, count, root, inPlace)) return false;
        }
        if (!allGather(c, t.dt, count, inPlace)) return false;
        for (int root : {0, c.nranks / 2, c.nranks - 1})
          if (!broadcast(c, t.dt, count, root, inPlace)) return false;
      }
      if (!allToAll(c, t.dt, count)) return false;
      if (!sendRecv(c, t.dt, count)) return false;
    }
  }
  return barrier(c);
}

}  // namespace mpdev
