// The NCCL drop-in (libnccl.so.2 on weft): what its files share. Every NCCL
// handle is a small wrapper around weft's: a communicator remembers its CUDA
// device and name, and runs its creation or finalization in the background
// when the application asked for a non-blocking one (ncclConfig_t.blocking
// = 0), which weft's own API does not do. Errors are set with weft's error
// sentence (base/error.h), so ncclGetLastError reads what weftGetLastError
// would. Entry points are named pnccl* (NCCL's profiling names) and exported
// as weak nccl* aliases too, as the real library does.
#pragma once

#include <nccl.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "weft/weft.h"

// What a communicator's background work (non-blocking init, split, shrink,
// finalize) shares with it. Held by both, so that an abort may leave a
// creation that cannot be interrupted to finish (and free what it made) alone.
struct ShimAsync {
  std::mutex mu;
  bool running = false;
  bool abandoned = false;             // the communicator was aborted meanwhile
  ncclResult_t result = ncclSuccess;  // of the work, once !running
  std::string text;                   // its error sentence
  weftComm_t made = nullptr;          // what a creation made
};

struct ncclComm {
  weftComm_t weft = nullptr;
  int rank = -1;
  int nranks = 0;
  int cudaDev = -1;
  bool blocking = true;
  bool finalized = false;
  std::string name;  // ncclConfig_t.commName, for log lines
  // Guards async and worker: frameworks poll ncclCommGetAsyncError from a
  // watchdog thread while another thread makes calls on the communicator.
  std::mutex settleMu;
  std::shared_ptr<ShimAsync> async;  // non-null while background work may be pending
  std::thread worker;
};

struct ncclWindow_vidmem {
  ncclComm_t comm;
  void* buff;
  size_t size;
  int flags;
};

// Exports nccl<name> as a weak alias of pnccl<name>, as the real library does
// (a profiler may interpose on either). In the file that defines pnccl<name>.
#define WEFT_NCCL_ALIAS(name) \
  extern "C" decltype(pnccl##name) nccl##name __attribute__((weak, alias("pnccl" #name)));

namespace weft {
namespace nccl {

constexpr int kNcclFp8First = ncclFloat8e4m3;

// Maps a weft result to NCCL's (weftTimeout: a peer that never answered).
ncclResult_t toNccl(weftResult_t r);
// Sets the thread's error sentence and returns code.
ncclResult_t fail(ncclResult_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The communicators handed out and not yet destroyed: every call checks its
// handle against them, so a stale or bogus one is an error, not a crash.
void registerComm(ncclComm_t comm);
void unregisterComm(ncclComm_t comm);
bool isLive(ncclComm_t comm);
// comm's weft communicator for `fn`, once its background work (if any) ended:
// an error for NULL, unknown, failed, finalized or aborted communicators.
ncclResult_t weftOf(ncclComm_t comm, const char* fn, weftComm_t* out);
// Waits for comm's background work and adopts what it made.
ncclResult_t settle(ncclComm_t comm);

// The weft datatype for `dt`. fp8 moves as bytes where nothing is reduced,
// and is refused where it would be (weft has no fp8 arithmetic).
ncclResult_t weftType(ncclDataType_t dt, bool reduces, const char* fn, weftDataType_t* out);
ncclResult_t weftOp(ncclRedOp_t op, const char* fn, weftRedOp_t* out);
// NCCL's NULL stream is CUDA's legacy default stream; weft's NULL is a host
// call. A NULL stream with device memory is enqueued on the legacy stream.
weftStream_t weftStream(cudaStream_t stream, const void* a, const void* b);

// The device current on this thread (0 when CUDA is unusable, as NCCL's
// ordinal would be for the only device).
int currentDevice();
// Makes `device` current on this (new) thread, where CUDA is usable.
void selectDevice(int device);

// Thread-local group depth of the drop-in and the communicators created
// inside the open group (their creation runs at once, in the background,
// and the outermost ncclGroupEnd waits for it).
bool inGroup();
void addGroupCreation(ncclComm_t comm);

// Validates `config` (NULL: defaults) and applies it to comm; logs each
// field that weft does not honour, with why.
ncclResult_t applyConfig(const ncclConfig_t* config, const char* fn, ncclComm_t comm);
// Runs `work` for comm: at once, or on a background thread when comm is
// non-blocking or a group is open (then ncclInProgress / ncclSuccess).
// Registers comm, runs its creation (runCreation) and hands it out in
// *newcomm; NULL (comm freed) when the creation failed or made nothing (a
// split with NCCL_SPLIT_NOCOLOR).
ncclResult_t handOut(ncclComm_t comm, ncclComm_t* newcomm, const char* fn,
                     std::function<weftResult_t(weftComm_t*)> work);
ncclResult_t runCreation(ncclComm_t comm, const char* fn,
                         std::function<weftResult_t(weftComm_t*)> work);

}  // namespace nccl
}  // namespace weft
