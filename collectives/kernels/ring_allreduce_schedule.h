// Ring allreduce written once over the device channel API (weft/device/
// channel.h): the CUDA data-movement kernel runs it with a block as its lanes,
// and the host tests run the same code with threads as ranks, so its logic is
// checked on every CI machine, GPU or not.
//
// Schedule: the buffer is cut into nranks chunks; rank r ends up owning the
// reduction of chunk (r + 1) % nranks after the reduce-scatter half, and the
// allgather half circulates the owned chunks. The chunks advance in pieces of
// at most one slot; every piece runs through all 2(n-1) steps before the next
// piece starts, so each link carries one message per step and one free slot
// is enough for progress (no step waits on a send that needs a later receive).
// Reductions happen in flight: a received piece is combined with the local
// input straight into the next outgoing slot (recvReduceSend), and the final
// step writes into the output (recvReduceCopy), then forwards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "collectives/kernels/lane_copy.h"
#include "weft/device/channel.h"

namespace weft {
namespace dev {

struct RingArgs {
  int rank;
  int nranks;
  Channel send;          // to rank + 1
  Channel recv;          // from rank - 1
  uint64_t sendSeq = 0;  // number of this call's first message on `send`
  uint64_t recvSeq = 0;  // and on `recv` (rooted collectives use links unevenly)
};

// The elements of each of the n chunks of a `count`-element buffer: a whole
// multiple of 64 elements (the last chunk takes what is left, maybe nothing),
// so that every chunk of an aligned buffer starts 16-byte aligned and the
// lanes move vectors (lane_copy.h). ringMessages (ring_call.h) counts with it.
WEFT_HD size_t ringChunk(size_t count, int n) {
  const size_t chunk = (count + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
  return (chunk + 63) / 64 * 64;
}

// The schedules' primitives (send, recvCopySend). Each returns
// false when a wait was aborted; *sent / *received count the messages.
//
// send: `len` elements of src as message *sent.
template <typename T, typename Lanes>
WEFT_HD bool sendPiece(const RingArgs& ring, uint64_t* sent, const T* src, size_t len,
                       const Lanes& lanes, int* shared) {
  if (!waitCredit(ring.send, *sent, lanes, shared)) return false;
  copyInto(reinterpret_cast<T*>(slotOf(ring.send, *sent)), src, len, lanes);
  post(ring.send, (*sent)++, len * sizeof(T), lanes);
  return true;
}

// recvCopySend: message *received into dst, and on to the next rank unless
// `forward` is false (the last step).
template <typename T, typename Lanes>
WEFT_HD bool recvCopySend(const RingArgs& ring, uint64_t* received, uint64_t* sent, T* dst,
                          bool forward, const Lanes& lanes, int* shared) {
  uint64_t bytes = 0;
  if (!waitData(ring.recv, *received, lanes, shared, &bytes)) return false;
  const size_t got = static_cast<size_t>(bytes / sizeof(T));
  const T* incoming = reinterpret_cast<const T*>(slotOf(ring.recv, *received));
  copyInto(dst, incoming, got, lanes);
  if (forward && !sendPiece(ring, sent, incoming, got, lanes, shared)) return false;
  consume(ring.recv, (*received)++, lanes);
  return true;
}

// out = reduction over ranks of in (count elements). Returns false when a wait
// was aborted. `shared` is one int visible to every lane (__shared__ on a GPU).
template <typename T, typename Op, typename Lanes>
WEFT_HD bool ringAllreduce(const T* in, T* out, size_t count, const RingArgs& ring,
                           const Lanes& lanes, int* shared) {
  const int n = ring.nranks;
  if (n == 1) {
    copyInto(out, in, count, lanes);
    lanes.sync();
    return true;
  }
  const size_t chunk = ringChunk(count, n);
  const size_t pieceElems = ring.send.slotBytes / sizeof(T);
  // Counters are never reset: a call continues the message numbering of the
  // calls before it on the same channels (every rank sends and receives the
  // same number per call, ringMessages of ring_call.h).
  uint64_t sent = ring.sendSeq, received = ring.recvSeq;
  for (size_t offset = 0; offset < chunk; offset += pieceElems) {
    // The piece of chunk c at this offset: [begin, begin + len) of the buffer.
    auto pieceOf = [&](int c, size_t* len) {
      const size_t begin = static_cast<size_t>(c) * chunk + offset;
      const size_t end = static_cast<size_t>(c) * chunk + chunk < count
                             ? static_cast<size_t>(c) * chunk + chunk
                             : count;
      const size_t stop = begin + pieceElems < end ? begin + pieceElems : end;
      *len = begin < stop ? stop - begin : 0;
      return begin;
    };
    size_t len = 0, got = 0;
    uint64_t bytes = 0;
    // Step 0: send our input piece of chunk r.
    size_t at = pieceOf(ring.rank, &len);
    if (!sendPiece(ring, &sent, in + at, len, lanes, shared)) return false;
    // Steps 1 .. n-1 of reduce-scatter: receive chunk r-s, add ours, pass on
    // (or, at the last step, keep the finished piece in `out` and pass it on:
    // that is the first allgather step).
    for (int s = 1; s < n; ++s) {
      const int c = (ring.rank - s + n) % n;
      at = pieceOf(c, &len);
      if (!waitData(ring.recv, received, lanes, shared, &bytes)) return false;
      got = static_cast<size_t>(bytes / sizeof(T));
      const T* incoming = reinterpret_cast<const T*>(slotOf(ring.recv, received));
      if (!waitCredit(ring.send, sent, lanes, shared)) return false;
      T* outgoing = reinterpret_cast<T*>(slotOf(ring.send, sent));
      if (s < n - 1) {
        combineInto<T, Op>(outgoing, incoming, in + at, got, lanes);
      } else {
        combineInto<T, Op>(out + at, incoming, in + at, got, lanes);
        lanes.sync();
        copyInto(outgoing, out + at, got, lanes);
      }
      consume(ring.recv, received++, lanes);
      post(ring.send, sent++, got * sizeof(T), lanes);
    }
    // Allgather: receive finished chunks r-s+1 .. and forward all but the last.
    for (int s = 1; s < n; ++s) {
      at = pieceOf((ring.rank - s + 1 + n) % n, &len);
      if (!recvCopySend(ring, &received, &sent, out + at, s < n - 1, lanes, shared)) return false;
    }
  }
  lanes.sync();
  return true;
}

// The ops on one element. Signed integer sum and prod wrap (computed on the
// unsigned type of the same width, as the host kernels do), never overflow UB.
template <typename T>
WEFT_HD T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
WEFT_HD T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

struct OpSum {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return wrapAdd(a, b);
  }
};
struct OpProd {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return wrapMul(a, b);
  }
};
struct OpMax {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return a < b ? b : a;
  }
};
struct OpMin {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return b < a ? b : a;
  }
};
// Bitwise ops: integer types only.
struct OpBand {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct OpBor {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct OpBxor {
  template <typename T>
  WEFT_HD static T apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

}  // namespace dev
}  // namespace weft
