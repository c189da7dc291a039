// Fake device, managed and pinned memory for tests (fake_runtime.h). Device
// memory is a memfd mapped twice: the PROT_NONE view is what callers get, the
// read-write view is what the fake's copies use. Every allocation is kept in
// a registry ordered by address, which classifies pointers.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "device/fake_runtime.h"

namespace weft {
namespace fake {
namespace {

struct Alloc {
  char* user = nullptr;  // what the caller got
  char* rw = nullptr;    // read-write view (== user unless device memory)
  size_t bytes = 0;      // requested
  size_t mapped = 0;     // page-rounded
  MemKind kind = MemKind::kHost;
  int device = -1;
  int fd = -1;            // device memory: its memfd, kept open for exportMemory
  bool imported = false;  // mapped by openMemory (another process's memory)
};

// What exportMemory writes into GpuExport::handle.
struct FakeHandle {
  int32_t fd;
  int32_t device;
  uint64_t bytes;
};

std::mutex mu;
std::map<uintptr_t, Alloc>& registry() {
  static auto* m = new std::map<uintptr_t, Alloc>();  // never destroyed: safe at exit
  return *m;
}
std::atomic<int> deviceAllocs{0};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "weft fake runtime: %s (errno %d: %s)\n", what, errno, std::strerror(errno));
  std::abort();
}

size_t pageRound(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes == 0 ? page : (bytes + page - 1) / page * page);
}

void* add(MemKind kind, size_t bytes, int device) {
  Alloc a;
  a.bytes = bytes;
  a.mapped = pageRound(bytes);
  a.kind = kind;
  a.device = device;
  if (kind == MemKind::kDevice) {
    int fd = memfd_create("weft-fake-device", MFD_CLOEXEC);
    if (fd < 0) die("memfd_create");
    if (ftruncate(fd, static_cast<off_t>(a.mapped)) != 0) die("ftruncate");
    void* user = mmap(nullptr, a.mapped, PROT_NONE, MAP_SHARED, fd, 0);
    void* rw = mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (user == MAP_FAILED || rw == MAP_FAILED) die("mmap of fake device memory");
    a.user = static_cast<char*>(user);
    a.rw = static_cast<char*>(rw);
    a.fd = fd;  // peers open it through /proc/<pid>/fd (exportMemory)
    deviceAllocs.fetch_add(1);
  } else {
    void* p = mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap of fake host memory");
    a.user = a.rw = static_cast<char*>(p);
    if (kind == MemKind::kManaged) deviceAllocs.fetch_add(1);
  }
  std::lock_guard<std::mutex> lock(mu);
  registry()[reinterpret_cast<uintptr_t>(a.user)] = a;
  return a.user;
}

// The allocation holding `p`, or nullptr (call with mu held).
const Alloc* find(const void* p) {
  auto& reg = registry();
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = reg.upper_bound(addr);
  if (it == reg.begin()) return nullptr;
  --it;
  const Alloc& a = it->second;
  return addr < it->first + a.mapped ? &a : nullptr;
}

}  // namespace

void* deviceAlloc(size_t bytes, int device) { return add(MemKind::kDevice, bytes, device); }
void* managedAlloc(size_t bytes, int device) { return add(MemKind::kManaged, bytes, device); }
void* pinnedAlloc(size_t bytes) { return add(MemKind::kPinnedHost, bytes, -1); }

void memFree(void* ptr) {
  if (ptr == nullptr) return;
  Alloc a;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = registry().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == registry().end()) die("memFree of a pointer the fake did not allocate");
    a = it->second;
    registry().erase(it);
  }
  if (a.kind == MemKind::kDevice || a.kind == MemKind::kManaged) deviceAllocs.fetch_sub(1);
  if (a.rw != a.user) munmap(a.rw, a.mapped);
  munmap(a.user, a.mapped);
  if (a.fd >= 0) close(a.fd);
}

bool exportMemory(const void* ptr, GpuExport* out) {
  std::lock_guard<std::mutex> lock(mu);
  const Alloc* a = find(ptr);
  if (a == nullptr || a->fd < 0 || a->user != ptr) return false;
  *out = GpuExport();
  FakeHandle h{a->fd, a->device, a->bytes};
  std::memcpy(out->handle, &h, sizeof(h));
  out->pid = static_cast<uint64_t>(getpid());
  out->ptr = reinterpret_cast<uintptr_t>(ptr);
  out->device = a->device;
  return true;
}

int dupMemoryFile(const void* ptr, uint64_t* offset) {
  std::lock_guard<std::mutex> lock(mu);
  const Alloc* a = find(ptr);
  if (a == nullptr || a->fd < 0) return -1;
  *offset = static_cast<uint64_t>(static_cast<const char*>(ptr) - a->user);
  return fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
}

void* openMemory(const GpuExport& peer) {
  if (peer.pid == static_cast<uint64_t>(getpid()))
    return reinterpret_cast<void*>(static_cast<uintptr_t>(peer.ptr));  // one address space
  FakeHandle h;
  std::memcpy(&h, peer.handle, sizeof(h));
  const std::string path = "/proc/" + std::to_string(peer.pid) + "/fd/" + std::to_string(h.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  Alloc a;
  a.bytes = h.bytes;
  a.mapped = pageRound(h.bytes);
  a.kind = MemKind::kDevice;
  a.device = h.device;
  a.imported = true;
  void* user = mmap(nullptr, a.mapped, PROT_NONE, MAP_SHARED, fd, 0);
  void* rw = mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (user == MAP_FAILED || rw == MAP_FAILED) die("mmap of a peer's fake device memory");
  a.user = static_cast<char*>(user);
  a.rw = static_cast<char*>(rw);
  std::lock_guard<std::mutex> lock(mu);
  registry()[reinterpret_cast<uintptr_t>(a.user)] = a;
  return a.user;
}

void closeMemory(void* ptr) {
  Alloc a;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = registry().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == registry().end() || !it->second.imported) return;  // ours: nothing to undo
    a = it->second;
    registry().erase(it);
  }
  munmap(a.rw, a.mapped);
  munmap(a.user, a.mapped);
}

void* accessible(const void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu);
  const Alloc* a = find(ptr);
  if (a == nullptr) return const_cast<void*>(ptr);  // ordinary host memory
  const size_t off = static_cast<size_t>(static_cast<const char*>(ptr) - a->user);
  if (off + bytes > a->bytes) {
    std::fprintf(stderr,
                 "weft fake runtime: a copy of %zu bytes at offset %zu overruns a %zu-byte %s "
                 "allocation\n",
                 bytes, off, a->bytes, memKindName(a->kind));
    std::abort();
  }
  return a->rw + off;
}

void copyToDevice(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(accessible(dst, bytes), accessible(src, bytes), bytes);
}

void copyFromDevice(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(accessible(dst, bytes), accessible(src, bytes), bytes);
}

void deviceMemset(void* dst, int byte, size_t bytes) {
  if (bytes > 0) std::memset(accessible(dst, bytes), byte, bytes);
}

weftResult_t classifyFake(const void* ptr, PointerInfo* info) {
  std::lock_guard<std::mutex> lock(mu);
  const Alloc* a = find(ptr);
  *info = PointerInfo();
  if (a != nullptr) {
    info->kind = a->kind;
    info->device = a->device;
  }
  return weftSuccess;
}

bool anyFakeDeviceMemory() { return deviceAllocs.load(std::memory_order_relaxed) > 0; }

}  // namespace fake
}  // namespace weft
