// The drop-in's shared pieces: result and error mapping, the registry of live
// communicators, datatype/op/stream translation, version and error strings.
#include <cstdarg>
#include <cstdio>
#include <unordered_set>

#include "base/device_runtime.h"
#include "base/error.h"
#include "core/call.h"
#include "shim.h"

namespace weft {
namespace nccl {

namespace {
std::mutex registryMu;
std::unordered_set<ncclComm_t>& registry() {
  static auto* live = new std::unordered_set<ncclComm_t>();  // never freed: used at exit
  return *live;
}
}  // namespace

ncclResult_t toNccl(weftResult_t r) {
  if (r == weftTimeout) return ncclRemoteError;
  if (r >= weftSuccess && r < weftTimeout) return static_cast<ncclResult_t>(r);
  return ncclInternalError;
}

ncclResult_t fail(ncclResult_t code, const char* fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  setErrorString(weftSuccess, text);  // the sentence; the code is NCCL's
  return code;
}

void registerComm(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  registry().insert(comm);
}

void unregisterComm(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  registry().erase(comm);
}

bool isLive(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  return registry().count(comm) == 1;
}

ncclResult_t settle(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm->settleMu);
  if (comm->worker.joinable()) comm->worker.join();
  if (!comm->async) return ncclSuccess;
  std::shared_ptr<ShimAsync> async = std::move(comm->async);
  if (async->made != nullptr) {
    comm->weft = async->made;
    weftCommCount(comm->weft, &comm->nranks);
    weftCommUserRank(comm->weft, &comm->rank);
  }
  if (async->result != ncclSuccess) {
    comm->async = async;  // keep the failure for later calls
    return fail(async->result, "%s", async->text.c_str());
  }
  return ncclSuccess;
}

ncclResult_t weftOf(ncclComm_t comm, const char* fn, weftComm_t* out) {
  clearError();
  if (comm == nullptr) return fail(ncclInvalidArgument, "%s: comm is NULL", fn);
  if (!isLive(comm))
    return fail(ncclInvalidArgument,
                "%s: comm is not a live communicator (destroyed, aborted or never created)", fn);
  if (ncclResult_t r = settle(comm)) return r;
  if (comm->finalized)
    return fail(ncclInvalidUsage, "%s: comm was finalized (ncclCommFinalize); destroy it", fn);
  if (comm->weft == nullptr)
    return fail(ncclInvalidUsage, "%s: comm has no communicator (its creation failed)", fn);
  *out = comm->weft;
  return ncclSuccess;
}

ncclResult_t weftType(ncclDataType_t dt, bool reduces, const char* fn, weftDataType_t* out) {
  const int raw = rawEnum(dt);  // read before it is ever used as the enum
  if (raw < 0 || raw >= ncclNumTypes)
    return fail(ncclInvalidArgument, "%s: datatype=%d is not an ncclDataType_t (0..%d)", fn, raw,
                ncclNumTypes - 1);
  if (raw >= kNcclFp8First) {
    if (reduces)
      return fail(ncclInvalidArgument,
                  "%s: datatype=%s: weft has no fp8 arithmetic, so fp8 reductions are refused "
                  "(calls that only move fp8 data work)",
                  fn, raw == ncclFloat8e4m3 ? "ncclFloat8e4m3" : "ncclFloat8e5m2");
    *out = weftUint8;
    return ncclSuccess;
  }
  *out = static_cast<weftDataType_t>(raw);
  return ncclSuccess;
}

ncclResult_t weftOp(ncclRedOp_t op, const char* fn, weftRedOp_t* out) {
  const int raw = rawEnum(op);
  // weft's bitwise ops (5..7) are not NCCL's: an NCCL program passing one has
  // a bug, and must not get a bitwise reduction it never asked for.
  if (raw < 0 || (raw >= ncclNumOps && raw < weftNumOps))
    return fail(ncclInvalidArgument,
                "%s: op=%d is neither an NCCL reduction (0..%d) nor one made by "
                "ncclRedOpCreatePreMulSum",
                fn, raw, ncclNumOps - 1);
  *out = static_cast<weftRedOp_t>(raw);
  return ncclSuccess;
}

weftStream_t weftStream(cudaStream_t stream, const void* a, const void* b) {
  if (stream != nullptr) return stream;
  DeviceRuntime* rt = deviceRuntime();
  if (!rt->mayHaveDeviceMemory()) return WEFT_STREAM_HOST;
  for (const void* p : {a, b}) {
    PointerInfo info;
    if (p != nullptr && rt->classify(p, &info) == weftSuccess && info.kind == MemKind::kDevice)
      return cudaStreamLegacy;
  }
  clearError();
  return WEFT_STREAM_HOST;
}

int currentDevice() {
  DeviceRuntime* rt = deviceRuntime();
  int device = 0;
  if (!rt->whyUnusable().empty() || rt->currentDevice(&device) != weftSuccess) device = 0;
  clearError();
  return device;
}

void selectDevice(int device) {
  DeviceRuntime* rt = deviceRuntime();
  int saved = -1;
  if (rt->whyUnusable().empty()) rt->beginEnqueue(device, &saved);  // kept: the thread's device
  clearError();
}

}  // namespace nccl
}  // namespace weft

using namespace weft::nccl;

extern "C" {

ncclResult_t pncclGetVersion(int* version) {
  if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* pncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "a CUDA call failed (ncclGetLastError says which)";
    case ncclSystemError:
      return "a system call failed (ncclGetLastError says which)";
    case ncclInternalError:
      return "internal error in weft";
    case ncclInvalidArgument:
      return "invalid argument (ncclGetLastError names it)";
    case ncclInvalidUsage:
      return "invalid usage (ncclGetLastError says why)";
    case ncclRemoteError:
      return "a peer failed or could not be reached";
    case ncclInProgress:
      return "operation in progress";
    default:
      return "unknown result code";
  }
}

const char* pncclGetLastError(ncclComm_t) { return weftGetLastError(nullptr); }

// Deprecated in NCCL and exported only for binary compatibility: weft reads
// its logging knobs once, when it first logs.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void pncclResetDebugInit() {}

}  // extern "C"

WEFT_NCCL_ALIAS(GetVersion)
WEFT_NCCL_ALIAS(GetErrorString)
WEFT_NCCL_ALIAS(GetLastError)
WEFT_NCCL_ALIAS(ResetDebugInit)
#pragma GCC diagnostic pop
