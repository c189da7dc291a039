// weft.hpp - a thin, header-only C++ RAII layer over the C ABI in weft.h.
// Failures become weft::Error exceptions (thrown here, on the caller's side of
// the ABI, never from inside libweft); communicators and requests free
// themselves. Everything else is exactly the C call underneath.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace weft {

class Error : public std::runtime_error {
 public:
  Error(weftResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  weftResult_t code() const { return code_; }

 private:
  weftResult_t code_;
};

inline void check(weftResult_t r) {
  if (r != weftSuccess) {
    throw Error(r, std::string(weftGetErrorString(r)) + ": " + weftGetLastError(nullptr));
  }
}

template <typename T>
struct TypeOf;
template <>
struct TypeOf<int8_t> {
  static constexpr weftDataType_t value = weftInt8;
};
template <>
struct TypeOf<uint8_t> {
  static constexpr weftDataType_t value = weftUint8;
};
template <>
struct TypeOf<int32_t> {
  static constexpr weftDataType_t value = weftInt32;
};
template <>
struct TypeOf<uint32_t> {
  static constexpr weftDataType_t value = weftUint32;
};
template <>
struct TypeOf<int64_t> {
  static constexpr weftDataType_t value = weftInt64;
};
template <>
struct TypeOf<uint64_t> {
  static constexpr weftDataType_t value = weftUint64;
};
template <>
struct TypeOf<float> {
  static constexpr weftDataType_t value = weftFloat32;
};
template <>
struct TypeOf<double> {
  static constexpr weftDataType_t value = weftFloat64;
};

inline weftUniqueId uniqueId() {
  weftUniqueId id;
  check(weftGetUniqueId(&id));
  return id;
}

// A pending non-blocking collective; wait() returns when it is complete. The
// destructor waits too (a request must not outlive its buffers unnoticed).
class Request {
 public:
  Request() = default;
  explicit Request(weftRequest_t r) : req_(r) {}
  Request(Request&& o) noexcept : req_(std::exchange(o.req_, nullptr)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      reset();
      req_ = std::exchange(o.req_, nullptr);
    }
    return *this;
  }
  ~Request() { reset(); }
  void wait() {
    if (req_ != nullptr) check(weftWait(&req_));
  }
  bool test() {
    if (req_ == nullptr) return true;
    int done = 0;
    check(weftTest(&req_, &done));
    return done != 0;
  }

 private:
  void reset() {
    if (req_ != nullptr) weftWait(&req_);
  }
  weftRequest_t req_ = nullptr;
};

// `count` T's of host memory from weftHostAlloc: zeroed, shareable with the
// other ranks of the node, so large collectives on it run at memcpy speed.
template <typename T>
class HostBuffer {
 public:
  explicit HostBuffer(size_t count) : count_(count) {
    void* p = nullptr;
    check(weftHostAlloc(&p, count * sizeof(T)));
    data_ = static_cast<T*>(p);
  }
  HostBuffer(HostBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      weftHostFree(data_);
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { weftHostFree(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

class Comm {
 public:
  Comm(int nranks, const weftUniqueId& id, int rank) {
    check(weftCommInitRank(&comm_, nranks, id, rank));
  }
  static Comm fromEnv() {
    weftComm_t c = nullptr;
    check(weftCommInitFromEnv(&c));
    return Comm(c);
  }
  Comm(Comm&& o) noexcept : comm_(std::exchange(o.comm_, nullptr)) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, nullptr);
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  int rank() const {
    int r = -1;
    check(weftCommUserRank(comm_, &r));
    return r;
  }
  int size() const {
    int n = 0;
    check(weftCommCount(comm_, &n));
    return n;
  }
  // SMs this rank's GPU ring takes for an allreduce of `count` T on a stream
  // (weftCommGpuCtas): leave them to it when overlapping compute.
  template <typename T>
  int gpuCtas(size_t count) const {
    int ctas = 0;
    check(weftCommGpuCtas(comm_, count, TypeOf<T>::value, &ctas));
    return ctas;
  }
  weftComm_t get() const { return comm_; }
  void abort() {
    if (comm_ != nullptr) check(weftCommAbort(std::exchange(comm_, nullptr)));
  }
  // The survivors' communicator without `exclude` (weftCommShrink); empty
  // (get() == NULL) on an excluded rank. This one stays as it is.
  Comm shrink(const std::vector<int>& exclude) const {
    weftComm_t c = nullptr;
    check(weftCommShrink(comm_, exclude.data(), static_cast<int>(exclude.size()), &c));
    return Comm(c);
  }

  template <typename T>
  void allReduce(const T* send, T* recv, size_t count, weftRedOp_t op = weftSum) {
    check(weftAllReduce(send, recv, count, TypeOf<T>::value, op, comm_, WEFT_STREAM_HOST));
  }
  template <typename T>
  Request allReduceAsync(const T* send, T* recv, size_t count, weftRedOp_t op = weftSum) {
    weftRequest_t r = nullptr;
    check(weftAllReduceAsync(send, recv, count, TypeOf<T>::value, op, comm_, &r));
    return Request(r);
  }
  template <typename T>
  void allGather(const T* send, T* recv, size_t sendcount) {
    check(weftAllGather(send, recv, sendcount, TypeOf<T>::value, comm_, WEFT_STREAM_HOST));
  }
  template <typename T>
  Request allGatherAsync(const T* send, T* recv, size_t sendcount) {
    weftRequest_t r = nullptr;
    check(weftAllGatherAsync(send, recv, sendcount, TypeOf<T>::value, comm_, &r));
    return Request(r);
  }

 private:
  explicit Comm(weftComm_t c) : comm_(c) {}
  void reset() {
    if (comm_ != nullptr) weftCommDestroy(std::exchange(comm_, nullptr));
  }
  weftComm_t comm_ = nullptr;
};

}  // namespace weft
