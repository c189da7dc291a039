// Memory: ncclMemAlloc/Free, buffer and window registration, and the
// pre-multiplied sum op. weft needs no registration (it registers what it
// moves, and caches it), so a registration is a handle that records the
// range and is checked when it comes back.
#include <map>
#include <set>

#include "base/device_runtime.h"
#include "base/error.h"
#include "shim.h"

using namespace weft;
using namespace weft::nccl;

namespace {

struct Registration {
  ncclComm_t comm;
  void* buff;
  size_t size;
};

std::mutex memMu;
// ncclMemAlloc's blocks: true for device memory, false for the host memory
// it gives where no CUDA device is usable (weft's extension).
std::map<void*, bool>& allocations() {
  static auto* all = new std::map<void*, bool>();
  return *all;
}
std::set<void*>& handles() {
  static auto* all = new std::set<void*>();
  return *all;
}

void remember(void* handle) {
  std::lock_guard<std::mutex> lock(memMu);
  handles().insert(handle);
}

bool forget(void* handle) {
  std::lock_guard<std::mutex> lock(memMu);
  return handles().erase(handle) == 1;
}

}  // namespace

extern "C" {

// Device memory of the current device; host memory that the ranks of a node
// can map (weftHostAlloc) where this process has no usable CUDA device, so
// that programs written for ncclMemAlloc run on hosts too.
ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  clearError();
  if (ptr == nullptr) return fail(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return ncclSuccess;
  DeviceRuntime* rt = deviceRuntime();
  const bool device = rt->whyUnusable().empty();
  if (device) {
    GpuExport unused;
    if (weftResult_t r = rt->allocDevice(currentDevice(), size, ptr, &unused)) return toNccl(r);
  } else if (weftResult_t r = weftHostAlloc(ptr, size)) {
    return toNccl(r);
  }
  std::lock_guard<std::mutex> lock(memMu);
  allocations()[*ptr] = device;
  return ncclSuccess;
}

ncclResult_t pncclMemFree(void* ptr) {
  clearError();
  if (ptr == nullptr) return ncclSuccess;
  bool device = false;
  {
    std::lock_guard<std::mutex> lock(memMu);
    auto it = allocations().find(ptr);
    if (it == allocations().end())
      return fail(ncclInvalidArgument, "ncclMemFree: ptr=%p was not returned by ncclMemAlloc", ptr);
    device = it->second;
    allocations().erase(it);
  }
  if (device) {
    deviceRuntime()->freeDevice(ptr);
    return ncclSuccess;
  }
  return toNccl(weftHostFree(ptr));
}

ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommRegister", &w)) return r;
  if (handle == nullptr) return fail(ncclInvalidArgument, "ncclCommRegister: handle is NULL");
  if (buff == nullptr && size > 0)
    return fail(ncclInvalidArgument, "ncclCommRegister: buff is NULL with size=%zu", size);
  *handle = new Registration{comm, buff, size};
  remember(*handle);
  return ncclSuccess;
}

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclCommDeregister", &w)) return r;
  auto* reg = static_cast<Registration*>(handle);
  if (handle == nullptr || !forget(handle))
    return fail(ncclInvalidArgument,
                "ncclCommDeregister: handle=%p is not a registration of ncclCommRegister", handle);
  if (reg->comm != comm) {
    remember(handle);
    return fail(ncclInvalidArgument,
                "ncclCommDeregister: handle=%p was registered on another communicator", handle);
  }
  delete reg;
  return ncclSuccess;
}

ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags) {
  const char* fn = "ncclCommWindowRegister";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  if (win == nullptr) return fail(ncclInvalidArgument, "%s: win is NULL", fn);
  if (winFlags != NCCL_WIN_DEFAULT && winFlags != NCCL_WIN_COLL_SYMMETRIC)
    return fail(ncclInvalidArgument, "%s: winFlags=%d is not an NCCL_WIN_* flag", fn, winFlags);
  if (buff == nullptr && size > 0)
    return fail(ncclInvalidArgument, "%s: buff is NULL with size=%zu", fn, size);
  *win = new ncclWindow_vidmem{comm, buff, size, winFlags};
  remember(*win);
  return ncclSuccess;
}

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  const char* fn = "ncclCommWindowDeregister";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  if (win == nullptr || !forget(win))
    return fail(ncclInvalidArgument, "%s: win=%p is not a window of ncclCommWindowRegister", fn,
                static_cast<void*>(win));
  if (win->comm != comm) {
    remember(win);
    return fail(ncclInvalidArgument, "%s: win=%p was registered on another communicator", fn,
                static_cast<void*>(win));
  }
  delete win;
  return ncclSuccess;
}

ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm) {
  const char* fn = "ncclRedOpCreatePreMulSum";
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, fn, &w)) return r;
  weftDataType_t type;
  if (ncclResult_t r = weftType(datatype, true, fn, &type)) return r;
  if (op == nullptr) return fail(ncclInvalidArgument, "%s: op is NULL", fn);
  weftRedOp_t made;
  if (weftResult_t r = weftRedOpCreatePreMulSum(&made, scalar, type,
                                                static_cast<weftScalarResidence_t>(residence), w))
    return toNccl(r);
  *op = static_cast<ncclRedOp_t>(made);
  return ncclSuccess;
}

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  weftComm_t w = nullptr;
  if (ncclResult_t r = weftOf(comm, "ncclRedOpDestroy", &w)) return r;
  return toNccl(weftRedOpDestroy(static_cast<weftRedOp_t>(op), w));
}

}  // extern "C"

WEFT_NCCL_ALIAS(MemAlloc)
WEFT_NCCL_ALIAS(MemFree)
WEFT_NCCL_ALIAS(CommRegister)
WEFT_NCCL_ALIAS(CommDeregister)
WEFT_NCCL_ALIAS(CommWindowRegister)
WEFT_NCCL_ALIAS(CommWindowDeregister)
WEFT_NCCL_ALIAS(RedOpCreatePreMulSum)
WEFT_NCCL_ALIAS(RedOpDestroy)
