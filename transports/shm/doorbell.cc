// Doorbell futex operations (see doorbell.h for the ordering argument).
#include "transports/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace weft {
namespace {
// Shared (not FUTEX_PRIVATE) futexes: the word is in memory mapped by several processes.
long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}

// The abstract address (leading NUL, not a file) of a wake socket.
socklen_t wakeAddress(uint32_t pid, uint32_t id, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  int len =
      std::snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "weft-bell-%u-%08x", pid, id);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
}

// One unbound datagram socket per process sends every wake-up.
int senderSocket() {
  static const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  return fd;
}
}  // namespace

void Doorbell::ring() {
  // An acq_rel read-modify-write that changes nothing: if it reads 0 it comes
  // before the sleeper's arm() exchange in `sleeping`'s modification order, so
  // that exchange reads from it and the counter this peer published (before
  // this call) is visible to the sleeper's re-check.
  const uint32_t state = sleeping.fetch_add(0, std::memory_order_acq_rel);
  if (state == 1) {
    seq.fetch_add(1, std::memory_order_seq_cst);
    futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
  } else if (state == 2) {
    // A full socket buffer (EAGAIN) already holds a wake-up; a closed one
    // (ECONNREFUSED) has no sleeper left.
    sockaddr_un addr;
    socklen_t len = wakeAddress(wakePid, wakeId, &addr);
    const char byte = 1;
    sendto(senderSocket(), &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
           reinterpret_cast<sockaddr*>(&addr), len);
  }
}

void Doorbell::drainWake() {
  char buf[64];
  while (recv(wakeFd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
  }
}

bool Doorbell::openWake() {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || senderSocket() < 0) {
    if (fd >= 0) close(fd);
    return false;
  }
  // A random id: another job's ranks of this namespace may share our pid
  // (other pid namespaces); a taken name is retried.
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint32_t id = 0;
    if (getrandom(&id, sizeof(id), 0) != sizeof(id)) id = static_cast<uint32_t>(attempt) * 7919u;
    sockaddr_un addr;
    socklen_t len = wakeAddress(static_cast<uint32_t>(getpid()), id, &addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
      wakePid = static_cast<uint32_t>(getpid());
      wakeId = id;
      wakeFd = fd;
      return true;
    }
  }
  close(fd);
  return false;
}

void Doorbell::closeWake() {
  if (wakeFd >= 0) close(wakeFd);
  wakeFd = -1;
}

uint32_t Doorbell::arm() {
  uint32_t v = seq.load(std::memory_order_acquire);
  // acq_rel exchange, the sleeper's half of the pair described in ring().
  sleeping.exchange(1, std::memory_order_acq_rel);
  return v;
}

void Doorbell::wait(uint32_t armedSeq, int timeoutUs) {
  timespec ts{timeoutUs / 1000000, (timeoutUs % 1000000) * 1000L};
  futex(&seq, FUTEX_WAIT, armedSeq, &ts);
}

}  // namespace weft
