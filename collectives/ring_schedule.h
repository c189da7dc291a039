// Index arithmetic shared by the ring algorithms. The buffer is cut into
// nranks segments (the first count % nranks one element longer) and each
// segment into the same number of chunks C, so "the same chunk one step
// earlier" is always global item i - C. Items are numbered step-major
// (i = step * C + chunk) and item i travels on stream i % nstreams.
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

// Items of a flow on `stream` when `total` items are striped over `nstreams`.
inline int64_t itemsOnStream(int64_t total, int nstreams, int stream) {
  return total > stream ? (total - stream + nstreams - 1) / nstreams : 0;
}

}  // namespace weft
