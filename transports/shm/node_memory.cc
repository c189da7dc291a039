// Peers' memory and the outbox (see node_memory.h).
#include "transports/shm/node_memory.h"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace weft {
namespace {

const uint64_t kProbeWord = 0x5745465450524f42ull;  // what connect() reads from every peer
const uint64_t kShareWord = 0x5745465453484152ull;  // written in every rank's probe page

}  // namespace

NodeMemory::~NodeMemory() {
  mapped_.reset();  // peers' mappings first; ours is only freed below
  if (outbox_ != nullptr) hostFree(outbox_);
}

weftResult_t NodeMemory::connect(const WaitPolicy& wait, bool mayShare) {
  // Under Yama's ptrace_scope=1 a peer may only read us if we allow it.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  struct Probe {
    int64_t pid;
    uint64_t addr;
  } mine{getpid(), reinterpret_cast<uint64_t>(&kProbeWord)};
  int slot = 0;
  WEFT_CHECK(publishAndWait(&mine, sizeof(mine), wait, nullptr, &slot));
  pids_.assign(nranks_, 0);
  std::vector<uint64_t> probeAt(nranks_, 0);
  for (int p = 0; p < nranks_; ++p) {
    Probe theirs;
    std::memcpy(&theirs, slotOf(p, slot), sizeof(theirs));
    pids_[p] = static_cast<pid_t>(theirs.pid);
    probeAt[p] = theirs.addr;
  }
  bool ok = true;
  for (int p = 0; p < nranks_ && ok; ++p) {
    uint64_t word = 0;
    if (p != rank_ &&
        (read(p, &word, probeAt[p], sizeof(word)) != weftSuccess || word != kProbeWord))
      ok = false;
  }
  // Everyone must agree, or the ranks would pick different algorithms.
  WEFT_CHECK(agree(ok, wait, &readable_));
  mapped_ = std::make_unique<PeerMemory>(nranks_);
  clearError();  // a failed probe is not an error
  sharing_ = false;
  if (readable_ && mayShare) WEFT_CHECK(probeSharing(wait, &sharing_));
  return weftSuccess;
}

weftResult_t NodeMemory::probeSharing(const WaitPolicy& wait, bool* shared) {
  void* page = nullptr;
  HostRegion mine;
  if (hostAlloc(4096, &page) == weftSuccess) {
    std::memcpy(page, &kShareWord, sizeof(kShareWord));
    mine = findHostRegion(page, 4096);
  }
  int slot = 0;
  weftResult_t r = publishAndWait(&mine, sizeof(mine), wait, nullptr, &slot);
  bool ok = r == weftSuccess && mine.inode != 0;
  {
    PeerMemory peers(nranks_);  // unmapped when this scope ends
    for (int p = 0; r == weftSuccess && ok && p < nranks_; ++p) {
      if (p == rank_) continue;
      HostRegion theirs;
      std::memcpy(&theirs, slotOf(p, slot), sizeof(theirs));
      char* view = nullptr;
      uint64_t word = 0;
      if (theirs.inode == 0 ||
          peers.resolve(p, pids_[p], theirs, theirs.base, &view) != weftSuccess)
        ok = false;
      else
        std::memcpy(&word, view, sizeof(word));
      ok = ok && word == kShareWord;
    }
    // Everyone must agree; after this barrier nobody reads our page any more.
    *shared = false;
    if (r == weftSuccess) r = agree(ok, wait, shared);
  }
  if (page != nullptr) hostFree(page);
  if (r != weftSuccess) return r;
  clearError();  // a failed probe is not an error: the ranks share nothing
  return weftSuccess;
}

weftResult_t NodeMemory::read(int peer, void* to, uint64_t remote, size_t bytes) {
  char* dst = static_cast<char*>(to);
  while (bytes > 0) {
    iovec l{dst, bytes};
    iovec r{reinterpret_cast<void*>(remote), bytes};
    ssize_t got = process_vm_readv(pids_[peer], &l, 1, &r, 1, 0);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return setError(weftRemoteError, "cannot read local rank %d's memory (pid %d): %s", peer,
                      pids_[peer], got < 0 ? strerror(errno) : "nothing read");
    }
    dst += got;
    remote += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return weftSuccess;
}

weftResult_t NodeMemory::outbox(size_t bytes, char** at, HostRegion* region) {
  if (outbox_ == nullptr || outboxBytes_ < bytes) {
    if (outbox_ != nullptr) hostFree(outbox_);  // peers drop their mapping at our next publish
    outbox_ = nullptr;
    void* mem = nullptr;
    WEFT_CHECK(hostAlloc(bytes, &mem));
    outbox_ = static_cast<char*>(mem);
    outboxBytes_ = bytes;
    outboxRegion_ = findHostRegion(outbox_, bytes);
  }
  *at = outbox_;
  *region = outboxRegion_;
  return weftSuccess;
}

}  // namespace weft
