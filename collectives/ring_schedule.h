// Index arithmetic shared by the ring algorithms. The buffer is cut into
// nranks segments (the first count % nranks one element longer) and each
// segment into the same number of chunks C, so "the same chunk one step
// earlier" is a fixed (step, chunk) pair. Items are numbered in RingOrder
// (blocks of chunks, each through every step) and item i travels on stream
// i % nstreams.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft {

struct Span {
  size_t offset;  // elements
  size_t count;   // elements
};

inline Span segmentOf(size_t count, int nranks, int seg) {
  size_t base = count / nranks, rem = count % nranks;
  size_t s = static_cast<size_t>(seg);
  return {s * base + (s < rem ? s : rem), base + (s < rem ? 1 : 0)};
}

inline Span chunkOf(Span seg, int64_t nchunks, int64_t chunk) {
  size_t lo = seg.count * static_cast<size_t>(chunk) / static_cast<size_t>(nchunks);
  size_t hi = seg.count * static_cast<size_t>(chunk + 1) / static_cast<size_t>(nchunks);
  return {seg.offset + lo, hi - lo};
}

// Chunks per segment so that no chunk exceeds chunkBytes (by more than one element).
inline int64_t chunksPerSegment(size_t maxSegElems, size_t elemSize, size_t chunkBytes) {
  size_t bytes = maxSegElems * elemSize;
  size_t c = (bytes + chunkBytes - 1) / chunkBytes;
  return c == 0 ? 1 : static_cast<int64_t>(c);
}

inline int mod(int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// The order in which a ring's (step, chunk) items travel. Chunks are taken in
// blocks of `block` chunks, and each block runs through every step before the
// next block starts: a chunk reduced at step s is sent on at step s+1 while it
// is still in the CPU cache, instead of after the whole segment (step-major
// order reads it back from memory, which costs a third of the bandwidth of a
// large allreduce on a two-rank TCP or shared-memory ring). Every item's
// predecessor (step - 1, same chunk) comes earlier in this order on every
// rank, which is what keeps the pipelined ring free of deadlock. With one
// block (block >= chunks) it is the plain step-major order.
struct RingOrder {
  int64_t steps = 1, chunks = 1, block = 1;

  // Item index -> (step, chunk). Every block before the last one is full.
  void at(int64_t i, int64_t* step, int64_t* chunk) const {
    int64_t b = i / (steps * block);
    int64_t first = b * block;
    int64_t width = chunks - first < block ? chunks - first : block;
    int64_t r = i - b * steps * block;
    *step = r / width;
    *chunk = first + r % width;
  }
  // (step, chunk) -> item index.
  int64_t index(int64_t step, int64_t chunk) const {
    int64_t b = chunk / block;
    int64_t first = b * block;
    int64_t width = chunks - first < block ? chunks - first : block;
    return b * steps * block + step * width + (chunk - first);
  }
};

// Bytes of chunks per block of RingOrder: twice this (a block's reduced
// chunks and the ones that replace them) should stay within a core's L2 cache.
constexpr size_t kRingBlockBytes = 512 << 10;

inline RingOrder ringOrder(int64_t steps, int64_t chunks, size_t chunkBytes) {
  RingOrder o;
  o.steps = steps;
  o.chunks = chunks;
  int64_t b = static_cast<int64_t>(kRingBlockBytes / (chunkBytes == 0 ? 1 : chunkBytes));
  o.block = b < 1 ? 1 : (b > chunks ? chunks : b);
  return o;
}

// Items of a flow on `stream` when `total` items are striped over `nstreams`.
inline int64_t itemsOnStream(int64_t total, int nstreams, int stream) {
  return total > stream ? (total - stream + nstreams - 1) / nstreams : 0;
}

}  // namespace weft
