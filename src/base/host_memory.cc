// The allocations behind weftHostAlloc and their registry (see host_memory.h).
#include "base/host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "base/error.h"

namespace weft {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, HostRegion> byBase;  // keyed by the allocation's first address
  std::atomic<uint64_t> frees{0};
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: frees may come from atexit handlers
  return *r;
}

// MADV_POPULATE_WRITE (uapi asm-generic/mman-common.h), for older headers.
constexpr int kPopulateWrite = 23;

size_t pageRounded(size_t bytes) {
  long page = sysconf(_SC_PAGESIZE);
  const size_t p = page > 0 ? static_cast<size_t>(page) : 4096;
  return (bytes + p - 1) / p * p;
}

}  // namespace

weftResult_t hostAlloc(size_t bytes, void** ptr) {
  const size_t rounded = pageRounded(bytes);
  int fd = memfd_create("weft-host", MFD_CLOEXEC);
  if (fd < 0) return setError(weftSystemError, "weftHostAlloc: memfd_create: %s", strerror(errno));
  struct stat st {};
  // fallocate reserves the pages now, so a shortage is an error here rather
  // than a SIGBUS at first touch; ftruncate alone where it is not supported.
  const bool sized = fallocate(fd, 0, 0, static_cast<off_t>(rounded)) == 0 ||
                     (errno == EOPNOTSUPP && ftruncate(fd, static_cast<off_t>(rounded)) == 0);
  if (!sized || fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return setError(weftSystemError, "weftHostAlloc: cannot size %zu bytes: %s", rounded,
                    strerror(err));
  }
  void* mem = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    int err = errno;
    close(fd);
    return setError(weftSystemError, "weftHostAlloc: cannot map %zu bytes: %s", rounded,
                    strerror(err));
  }
  // Huge pages where the kernel gives them to shared memory (shmem_enabled
  // "advise"): fewer TLB misses when peers stream through the buffer.
  madvise(mem, rounded, MADV_HUGEPAGE);
  // Map every page now: the first touch of a page costs microseconds (more in a VM),
  // which a collective must not pay. Two parts to that cost, two steps:
  // the guest kernel's page fault, which one MADV_POPULATE_WRITE call spares
  // for all pages at once (Linux 5.14; it fails harmlessly before), and a
  // cost the guest does not see (no fault is counted; most likely the
  // hypervisor's first sight of the page), which only a touch from user
  // space paid, so it is paid here, in this thread.
  madvise(mem, rounded, kPopulateWrite);
  volatile char* page = static_cast<char*>(mem);
  for (size_t at = 0; at < rounded; at += 4096) page[at] = 0;
  // A forked child does not inherit it: a MAP_SHARED page would otherwise be
  // shared with the child instead of copied, unlike any malloc'd memory.
  madvise(mem, rounded, MADV_DONTFORK);
  HostRegion region;
  region.inode = static_cast<uint64_t>(st.st_ino);
  region.device = static_cast<uint64_t>(st.st_dev);
  region.fd = fd;
  region.base = reinterpret_cast<uint64_t>(mem);
  region.bytes = rounded;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.byBase[reinterpret_cast<uintptr_t>(mem)] = region;
  }
  *ptr = mem;
  return weftSuccess;
}

weftResult_t hostFree(void* ptr) {
  Registry& r = registry();
  HostRegion region;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.byBase.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.byBase.end())
      return setError(weftInvalidArgument,
                      "weftHostFree: ptr %p was not returned by weftHostAlloc (or was freed)", ptr);
    region = it->second;
    r.byBase.erase(it);
  }
  munmap(ptr, region.bytes);
  close(static_cast<int>(region.fd));
  r.frees.fetch_add(1, std::memory_order_relaxed);
  return weftSuccess;
}

HostRegion findHostRegion(const void* ptr, size_t bytes) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(ptr);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.byBase.empty()) return HostRegion{};
  auto it = r.byBase.upper_bound(at);  // the first allocation starting after ptr
  if (it == r.byBase.begin()) return HostRegion{};
  const HostRegion& region = std::prev(it)->second;
  if (at + bytes > region.base + region.bytes || at + bytes < at) return HostRegion{};
  return region;
}

uint64_t hostFreeCount() { return registry().frees.load(std::memory_order_relaxed); }

}  // namespace weft
