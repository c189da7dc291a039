// Shared pieces of mp_device, the multi-process test of calls on a stream
// with the fake CUDA (src/device/fake_runtime.h): the job, fake device
// buffers (PROT_NONE to the host: weft touching one crashes the rank), and
// the check groups, one file each.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <string>
#include <vector>

#include "device/fake_runtime.h"
#include "mp_common.h"

namespace mpdev {

struct Ctx {
  weftComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  void* stream = nullptr;
  mp::Log* log = nullptr;
};

// Fake device memory; upload/download go through the fake's own view.
class DevBuf {
 public:
  explicit DevBuf(size_t bytes, int device = 0)
      : bytes_(bytes), p_(static_cast<unsigned char*>(weft::fake::deviceAlloc(bytes, device))) {
    std::vector<unsigned char> junk(bytes, 0x5a);
    upload(junk.data());
  }
  ~DevBuf() { weft::fake::memFree(p_); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  unsigned char* p() const { return p_; }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t offset = 0, size_t bytes = SIZE_MAX) {
    weft::fake::copyToDevice(p_ + offset, host, bytes == SIZE_MAX ? bytes_ - offset : bytes);
  }
  std::vector<unsigned char> download(size_t offset = 0, size_t bytes = SIZE_MAX) const {
    std::vector<unsigned char> out(bytes == SIZE_MAX ? bytes_ - offset : bytes);
    weft::fake::copyFromDevice(out.data(), p_ + offset, out.size());
    return out;
  }

 private:
  size_t bytes_;
  unsigned char* p_;
};

// Logs "<what>: returned <r>: <last error>" unless r is weftSuccess.
bool callOk(Ctx& c, const std::string& what, weftResult_t r);
// Logs what when cmp (a compareElems answer) is not empty.
void expectSame(Ctx& c, const std::string& what, const std::string& cmp);
void sync(Ctx& c);

// The check groups. False when a call failed (the communicator may be broken).
bool checkCollectives(Ctx& c);  // mp_device_coll.cc: every collective
bool checkInFlight(Ctx& c);     // mp_device_order.cc: several calls before one sync
bool checkStalled(Ctx& c);      // the call returns while the stream is stalled
bool checkInterleaved(Ctx& c);  // host and stream calls keep API order
bool checkGroup(Ctx& c);        // several calls and point-to-point in one group
bool checkBadInput(Ctx& c);     // refused locally, with the argument named
bool checkRing(Ctx& c);         // mp_device_ring.cc: the GPU ring's own cases
bool checkRingMixed(Ctx& c);    // ring and host-staged calls mixed on two streams
// Rank 1 is killed while every rank's ring kernel runs (kill_rank_test.sh
// reads the DYING / SURVIVOR-OK / UNEXPECTED lines).
void ringKill(Ctx& c);
// The error case (its own run): the last rank aborts; the others' stream
// must not hang and their async error must be set.
bool checkPeerAbort(Ctx& c);
// The last rank sits out a ring call: the others time out (mp_device_order.cc).
bool checkPeerAbsent(Ctx& c);

}  // namespace mpdev
