// Buffer roles and staging plans of calls on a stream (see staging_plan.h).
#include "device/staging_plan.h"

#include "collectives/reduce.h"

namespace weft {
namespace {

constexpr size_t kAlign = 256;  // what cudaMalloc guarantees; keeps reductions aligned

size_t take(size_t* cursor, size_t bytes) {
  size_t at = (*cursor + kAlign - 1) / kAlign * kAlign;
  *cursor = at + bytes;
  return at;
}

}  // namespace

int deviceOfBuffers(const Call& call, int n) {
  for (int i = 0; i < n; ++i) {
    const PointerInfo& info = call.buffers[i];
    if (info.kind == MemKind::kDevice || info.kind == MemKind::kManaged) return info.device;
  }
  return -1;
}

int buffersOf(const Call& call, int rank, int nranks, BufferUse out[2]) {
  const CollArgs& a = call.args;
  if (call.kind == CollKind::kBarrier || a.count == 0) return 0;
  const size_t b = a.count * datatypeSize(a.datatype);
  const size_t nb = b * static_cast<size_t>(nranks);
  const bool root = rank == a.root;
  int k = 0;
  auto use = [&](const char* name, const void* p, size_t bytes) {
    out[k++] = BufferUse{name, p, bytes};
  };
  switch (call.kind) {
    case CollKind::kAllReduce:
      use("sendbuff", a.sendbuff, b);
      use("recvbuff", a.recvbuff, b);
      break;
    case CollKind::kAllGather:
      use("sendbuff", a.sendbuff, b);
      use("recvbuff", a.recvbuff, nb);
      break;
    case CollKind::kReduceScatter:
      use("sendbuff", a.sendbuff, nb);
      use("recvbuff", a.recvbuff, b);
      break;
    case CollKind::kBroadcast:
      if (root) use("sendbuff", a.sendbuff, b);
      use("recvbuff", a.recvbuff, b);
      break;
    case CollKind::kReduce:
      use("sendbuff", a.sendbuff, b);
      if (root) use("recvbuff", a.recvbuff, b);
      break;
    case CollKind::kAllToAll:
      use("sendbuff", a.sendbuff, nb);
      use("recvbuff", a.recvbuff, nb);
      break;
    case CollKind::kSend:
      use("sendbuff", a.sendbuff, b);
      break;
    case CollKind::kRecv:
      use("recvbuff", a.recvbuff, b);
      break;
    case CollKind::kBarrier:
      break;
  }
  return k;
}

void planCall(const Call& call, int rank, int nranks, bool allPinned, size_t* cursor,
              StagedCall* out) {
  *out = StagedCall();
  out->call = call;
  const CollArgs& a = call.args;
  if (a.op == kOpPreMulSum && call.premul.read != nullptr) {
    // The scalar is copied in stream order with the inputs: what a kernel
    // wrote there before the call is what the call multiplies by.
    out->scalarOffset = take(cursor, sizeof call.premul.value);
    out->in.push_back(
        {const_cast<void*>(call.premul.read), out->scalarOffset, datatypeSize(a.datatype)});
    out->copiesScalar = true;
  }
  if (allPinned || call.kind == CollKind::kBarrier || a.count == 0) return;
  out->staged = true;
  const size_t b = a.count * datatypeSize(a.datatype);
  const size_t nb = b * static_cast<size_t>(nranks);
  const size_t mine = b * static_cast<size_t>(rank);
  const bool root = rank == a.root;
  void* send = const_cast<void*>(a.sendbuff);
  void* recv = a.recvbuff;
  auto in = [&](void* user, size_t off, size_t bytes) { out->in.push_back({user, off, bytes}); };
  auto outc = [&](void* user, size_t off, size_t bytes) { out->out.push_back({user, off, bytes}); };
  switch (call.kind) {
    case CollKind::kAllReduce: {  // in place on one region
      size_t r = take(cursor, b);
      in(send, r, b);
      outc(recv, r, b);
      out->sendOffset = out->recvOffset = r;
      break;
    }
    case CollKind::kBroadcast: {  // in place; only the root's input is read
      size_t r = take(cursor, b);
      if (root) in(send, r, b);
      outc(recv, r, b);
      out->sendOffset = out->recvOffset = r;
      break;
    }
    case CollKind::kReduce: {  // in place; only the root's output is written
      size_t r = take(cursor, b);
      in(send, r, b);
      if (root) outc(recv, r, b);
      out->sendOffset = out->recvOffset = r;
      break;
    }
    case CollKind::kAllGather: {  // in place: input at block `rank` of the output
      size_t r = take(cursor, nb);
      in(send, r + mine, b);
      outc(recv, r, nb);
      out->sendOffset = r + mine;
      out->recvOffset = r;
      break;
    }
    case CollKind::kReduceScatter: {  // in place: output is block `rank` of the input
      size_t r = take(cursor, nb);
      in(send, r, nb);
      outc(recv, r + mine, b);
      out->sendOffset = r;
      out->recvOffset = r + mine;
      break;
    }
    case CollKind::kAllToAll: {  // never in place
      size_t s = take(cursor, nb), r = take(cursor, nb);
      in(send, s, nb);
      outc(recv, r, nb);
      out->sendOffset = s;
      out->recvOffset = r;
      break;
    }
    case CollKind::kSend:
      out->sendOffset = take(cursor, b);
      in(send, out->sendOffset, b);
      break;
    case CollKind::kRecv:
      out->recvOffset = take(cursor, b);
      outc(recv, out->recvOffset, b);
      break;
    case CollKind::kBarrier:
      break;
  }
}

void placeCall(StagedCall* sc, char* base) {
  if (sc->copiesScalar) sc->call.premul.read = base + sc->scalarOffset;
  if (!sc->staged) return;
  CollArgs& a = sc->call.args;
  const bool sends = sc->call.kind != CollKind::kRecv;
  const bool recvs = sc->call.kind != CollKind::kSend;
  a.sendbuff = sends ? base + sc->sendOffset : nullptr;
  a.recvbuff = recvs ? base + sc->recvOffset : nullptr;
}

}  // namespace weft
