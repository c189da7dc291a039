// Shared pieces of the multi-process test program (mp_collectives): the job
// it runs in, the failure log (one line per failing case), buffers placed at a
// chosen offset from a 64-byte boundary with guard bytes behind them, and the
// datatype traits the checks are templated on.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mp {

struct Job {
  weftComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  size_t largeCount = 1000003;  // "odd, > one chunk" count of the allreduce/allgather matrix
  size_t hugeBytes = 64 << 20;  // the one big float-sum allreduce
};

// Counts failing cases and prints one line for each (the first few hundred).
class Log {
 public:
  explicit Log(int rank) : rank_(rank) {}
  void fail(const std::string& what) {
    if (++failures_ <= 200) std::printf("rank %d: FAIL %s\n", rank_, what.c_str());
    std::fflush(stdout);
  }
  void pass() { ++passes_; }
  // Adds the counts of another log (a worker thread's, whose lines were printed already).
  void absorb(const Log& other) {
    failures_ += other.failures_;
    passes_ += other.passes_;
  }
  int failures() const { return failures_; }
  int passes() const { return passes_; }

 private:
  int rank_;
  int failures_ = 0;
  int passes_ = 0;
};

// Where Buffers come from: aligned_alloc (the default), all from weftHostAlloc
// (peers on the node map them), or mixed: every other buffer, with the
// alternation shifted by rank, so one call meets shared and private buffers.
enum class HostAlloc { kNone, kAll, kMixed };
void setHostAlloc(HostAlloc mode, int rank);
// Parses "none", "all" or "mixed"; false otherwise.
bool parseHostAlloc(const char* text, HostAlloc* mode);
// `total` bytes, 64-byte aligned, from where setHostAlloc says; exits when out
// of memory. *shared tells how to free it (releaseTestMemory).
unsigned char* allocateTestMemory(size_t total, bool* shared);
void releaseTestMemory(unsigned char* base, bool shared);

// `bytes` of storage starting `offset` bytes past a 64-byte boundary, followed
// by kGuardBytes of a known pattern that no collective may touch.
class Buffer {
 public:
  static constexpr size_t kGuardBytes = 64;
  static constexpr unsigned char kGuard = 0xa5;
  Buffer(size_t bytes, size_t offset) : bytes_(bytes) {
    size_t total = offset + bytes + kGuardBytes;
    total = (total + 63) / 64 * 64;
    base_ = allocateTestMemory(total, &shared_);
    std::memset(base_, kGuard, total);
    data_ = base_ + offset;
  }
  ~Buffer() { releaseTestMemory(base_, shared_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }
  unsigned char* data() { return data_; }
  bool guardIntact() const {
    for (size_t i = 0; i < kGuardBytes; ++i)
      if (data_[bytes_ + i] != kGuard) return false;
    return true;
  }

 private:
  size_t bytes_;
  bool shared_ = false;
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
};

template <typename T>
struct Type;
template <>
struct Type<int8_t> {
  static constexpr weftDataType_t kDt = weftInt8;
  static constexpr const char* kName = "int8";
};
template <>
struct Type<int32_t> {
  static constexpr weftDataType_t kDt = weftInt32;
  static constexpr const char* kName = "int32";
};
template <>
struct Type<int64_t> {
  static constexpr weftDataType_t kDt = weftInt64;
  static constexpr const char* kName = "int64";
};
template <>
struct Type<float> {
  static constexpr weftDataType_t kDt = weftFloat;
  static constexpr const char* kName = "float";
};
template <>
struct Type<double> {
  static constexpr weftDataType_t kDt = weftDouble;
  static constexpr const char* kName = "double";
};

// Where the buffers of one case sit: out of place (two buffers) or in place,
// each at an element offset from a 64-byte boundary (natural alignment kept).
struct Placement {
  bool inPlace;
  size_t sendOffset;  // elements
  size_t recvOffset;  // elements
  std::string name() const {
    return std::string(inPlace ? "in-place" : "out-of-place") + "(+" + std::to_string(sendOffset) +
           ",+" + std::to_string(recvOffset) + " elems)";
  }
};
constexpr Placement kPlacements[] = {
    {false, 0, 0},
    {false, 1, 3},
    {true, 0, 0},
    {true, 3, 3},
};

const char* opName(weftRedOp_t op);
uint64_t hashBytes(const void* data, size_t bytes);

// The test groups (one file each).
void checkAllReduce(const Job& job, Log& log);
void checkAllGather(const Job& job, Log& log);
void checkAsync(const Job& job, Log& log);
void checkDeterminism(const Job& job, Log& log);
void checkReuse(const Job& job, Log& log);      // mp_reuse.cc
void checkOverlap(const Job& job, Log& log);    // mp_overlap.cc
void checkPreMulSum(const Job& job, Log& log);  // mp_premul.cc

}  // namespace mp
