// Communicator bookkeeping: config, the live registry, failure state, teardown.
#include "core/comm.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "core/replica.h"
#include "transports/tcp/tcp_congestion.h"

namespace weft {
namespace {
std::mutex registryMu;

// This process's pid, for the fork check of every call: getpid() is a system
// call (glibc stopped caching it), and the pid only changes in a fork child,
// where the handler below refreshes it. 0: not read yet.
std::atomic<pid_t> cachedPid{0};
void refreshPid() { cachedPid.store(getpid(), std::memory_order_relaxed); }
pid_t currentPid() {
  pid_t pid = cachedPid.load(std::memory_order_relaxed);
  if (pid != 0) return pid;
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, refreshPid); });
  refreshPid();
  return cachedPid.load(std::memory_order_relaxed);
}
std::unordered_set<const weftComm*>& registry() {
  static auto* set = new std::unordered_set<const weftComm*>();  // never destroyed: safe at exit
  return *set;
}
}  // namespace

void registerComm(weftComm* comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  registry().insert(comm);
}

bool isLiveComm(const weftComm* comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  return registry().count(comm) != 0;
}

weftResult_t checkComm(const weftComm* comm, const char* fn) {
  CommCall call(const_cast<weftComm*>(comm), fn, /*exclusive=*/false);
  return call.status();
}

namespace {
// callerMu for a call entering, under registryMu. Held with callerFn null
// means its owner is between clearing callerFn and unlocking (~CommCall): a
// few instructions, so a bounded retry lets that caller in, or refuses it
// with the name of the call inside, never with an empty one.
bool takeCaller(weftComm* comm) {
  for (int tries = 0; tries < 1000; ++tries) {
    if (comm->callerMu.try_lock()) return true;
    if (comm->callerFn.load() != nullptr) return false;
    std::this_thread::yield();
  }
  return false;
}
}  // namespace

CommCall::CommCall(weftComm* comm, const char* fn, bool exclusive)
    : comm_(nullptr), exclusive_(exclusive) {
  std::lock_guard<std::mutex> lock(registryMu);
  if (comm == nullptr) {
    status_ = setError(weftInvalidArgument, "%s: comm is NULL", fn);
  } else if (registry().count(comm) == 0) {
    status_ =
        setError(weftInvalidArgument,
                 "%s: comm is not a live communicator (destroyed, aborted or never created)", fn);
  } else if (comm->aborted.load()) {
    status_ = setError(weftInvalidUsage, "%s: comm was aborted", fn);
  } else if (comm->ownerPid != currentPid()) {
    status_ = setError(weftInvalidUsage,
                       "%s: comm was created by process %d and cannot be used from forked child %d",
                       fn, comm->ownerPid, currentPid());
  } else if (exclusive && !takeCaller(comm)) {
    const char* other = comm->callerFn.load();
    status_ = setError(weftInvalidUsage,
                       "%s: another thread is inside %s on this communicator; calls on one "
                       "communicator must not overlap (wait for that call to return, or give each "
                       "thread its own communicator)",
                       fn, other != nullptr ? other : "a call");
  } else {
    status_ = weftSuccess;
    comm_ = comm;
    comm_->activeCalls.fetch_add(1);
    if (exclusive && comm_->callerDepth++ == 0) comm_->callerFn.store(fn);
  }
}

CommCall::~CommCall() {
  if (comm_ == nullptr) return;
  if (exclusive_) {
    // Cleared before the unlock, without registryMu (a lock pair saved on
    // every call): destroy, which reads callerFn under registryMu, may then
    // retire the communicator while this call is still leaving, and waits
    // for activeCalls below. A caller refused in between retries (takeCaller).
    // Only this thread touches callerDepth.
    if (--comm_->callerDepth == 0) comm_->callerFn.store(nullptr);
    comm_->callerMu.unlock();
  }
  comm_->activeCalls.fetch_sub(1);  // last: after it, destroy may free the communicator
}

uint8_t takeCallerTurn(weftComm* comm) {
  const std::thread::id self = std::this_thread::get_id();
  if (comm->lastCaller != self) {
    if (comm->lastCaller != std::thread::id()) ++comm->threadTurns;
    comm->lastCaller = self;
  }
  return comm->threadTurns;
}

bool unregisterComm(weftComm* comm) {
  std::lock_guard<std::mutex> lock(registryMu);
  return registry().erase(comm) == 1;
}

// Calls in flight notice `aborted` (or finish) and leave; bounded so that a
// wedged call cannot make destroy or abort hang.
bool waitForCallsToLeave(weftComm* comm) {
  for (int i = 0; i < 5000 && comm->activeCalls.load() > 0; ++i) usleep(1000);
  return comm->activeCalls.load() == 0;
}

void freeRetiredComm(weftComm* comm, const char* fn) {
  if (waitForCallsToLeave(comm)) {
    delete comm;  // the destructor drains the progress thread (bounded by WEFT_TIMEOUT)
    return;
  }
  WEFT_WARN(INIT,
            "%s: an API call was still inside the communicator 5 s after it was retired; its "
            "memory is left allocated rather than freed under that call",
            fn);
}

weftResult_t retireIdleComm(weftComm* comm, const char* fn) {
  {
    // One critical section with the check, so that no exclusive call can
    // enter between it and the unregistering.
    std::lock_guard<std::mutex> lock(registryMu);
    if (registry().count(comm) == 0)
      return setError(weftInvalidArgument, "%s: comm is not a live communicator (double destroy?)",
                      fn);
    const char* other = comm->callerFn.load();
    if (other != nullptr)
      return setError(weftInvalidUsage,
                      "%s: another thread is inside %s on this communicator; destroy it after "
                      "that call returns, or call weftCommAbort, which any thread may call at any "
                      "time",
                      fn, other);
    registry().erase(comm);
  }
  return weftSuccess;
}

namespace {

weftResult_t readAlgo(AlgoId* out) {
  static const struct {
    const char* name;
    AlgoId algo;
  } kAlgos[] = {
      {"auto", AlgoId::kAuto}, {"ring", AlgoId::kRing},     {"oneshot", AlgoId::kOneshot},
      {"tree", AlgoId::kTree}, {"hier", AlgoId::kHierRing}, {"hier-leaf", AlgoId::kHierLeaf},
      {"rd", AlgoId::kRd},     {"rhd", AlgoId::kRhd},       {"gpu-ring", AlgoId::kGpuRing}};
  std::string algo;
  WEFT_CHECK(configChoice("WEFT_ALGO", &algo));
  for (const auto& a : kAlgos) {
    if (algo == a.name) {
      *out = a.algo;
      return weftSuccess;
    }
  }
  return setError(weftInternalError, "WEFT_ALGO=%s: a word of the table with no algorithm",
                  algo.c_str());
}

// Knobs read where they are used (the log, the reduction kernels, the
// topology, sockets, verbs), whose readers fall back to the default on a bad
// value; checked here too so that a communicator refuses one with its sentence.
weftResult_t checkKnobsReadElsewhere() {
  std::string word;
  for (const char* name :
       {"WEFT_DEBUG", "WEFT_REDUCE_ISA", "WEFT_NET_GDR_LEVEL", "WEFT_SOCKET_FAMILY"})
    WEFT_CHECK(configChoice(name, &word));
  int64_t v = 0;
  for (const char* name :
       {"WEFT_IB_GID_INDEX", "WEFT_IB_TC", "WEFT_IB_SL", "WEFT_IB_TIMEOUT", "WEFT_IB_RETRY_CNT"})
    WEFT_CHECK(configSize(name, &v));
  return weftSuccess;
}

// The TCP transport's knobs.
weftResult_t readSocketConfig(CommConfig* cfg) {
  int64_t v = 0;
  WEFT_CHECK(configSize("WEFT_SOCKET_NSTREAMS", &v));
  cfg->nstreams = static_cast<int>(v);
  WEFT_CHECK(configSize("WEFT_SOCKET_PER_DIRECTION", &v));
  cfg->bulkMin = static_cast<size_t>(v);
  WEFT_CHECK(configSize("WEFT_SOCKET_LANES", &v));
  cfg->socketLanes = static_cast<int>(v);
  WEFT_CHECK(configSize("WEFT_SOCKET_SPLICE", &v));
  cfg->spliceMin = static_cast<size_t>(v);
  WEFT_CHECK(configSize("WEFT_SOCKET_SPLICE_MAX", &v));
  cfg->spliceMaxCall = static_cast<size_t>(v);
  WEFT_CHECK(configSwitch("WEFT_RUNTIME_CONNECT", &cfg->connectOnUse));
  cfg->socketCongestion = configString("WEFT_SOCKET_CONGESTION");
  return checkCongestionSetting(cfg->socketCongestion);
}

// Waiting: the timeout and the spin and yield stages (base/wait.h).
weftResult_t readWaitConfig(CommConfig* cfg) {
  int64_t v = 0;
  WEFT_CHECK(configSeconds("WEFT_TIMEOUT", &cfg->timeoutSec));
  WEFT_CHECK(configSizeOrAuto("WEFT_SPIN_US", &cfg->spinAuto, &v));
  if (!cfg->spinAuto) cfg->spinUs = v;
  WEFT_CHECK(configSize("WEFT_YIELD_US", &v));
  cfg->yieldUs = v;
  return weftSuccess;
}

// Shared memory and verbs.
weftResult_t readShmAndIbConfig(CommConfig* cfg) {
  int64_t v = 0;
  bool off = false;
  WEFT_CHECK(configSwitch("WEFT_IB_DISABLE", &off));
  cfg->ibEnabled = !off;
  WEFT_CHECK(configSwitch("WEFT_SHM_DISABLE", &off));
  cfg->shmEnabled = !off;
  WEFT_CHECK(configSwitch("WEFT_SHM_MAP", &cfg->shmMap));
  WEFT_CHECK(configSize("WEFT_SHM_FIFO", &v));
  cfg->shmFifoBytes = static_cast<size_t>(v);
  cfg->shmFifoSet = configIsSet("WEFT_SHM_FIFO");
  WEFT_CHECK(configSize("WEFT_IB_BUFFER", &v));
  cfg->ibBufferBytes = static_cast<size_t>(v);
  cfg->ibBufferSet = configIsSet("WEFT_IB_BUFFER");
  WEFT_CHECK(configSize("WEFT_IB_QPS_PER_CONNECTION", &v));
  cfg->ibQps = static_cast<int>(v);
  WEFT_CHECK(configSize("WEFT_IB_ZCOPY_THRESHOLD", &v));
  cfg->ibZcopyMin = static_cast<size_t>(v);
  WEFT_CHECK(configSize("WEFT_IB_REG_CACHE", &v));
  cfg->ibRegCacheBytes = static_cast<size_t>(v);
  WEFT_CHECK(configSwitch("WEFT_IB_REG_PERSIST", &cfg->ibRegPersist));
  WEFT_CHECK(configSwitch("WEFT_BIND_PROGRESS", &cfg->bindProgress));
  return configSwitch("WEFT_IB_RDMACM", &cfg->ibRdmacm);
}

// The GPU ring: whether it runs, its CTAs and their width.
weftResult_t readGpuConfig(CommConfig* cfg) {
  int64_t v = 0;
  std::string gpuRing;
  WEFT_CHECK(configChoice("WEFT_GPU_RING", &gpuRing));
  cfg->gpuRing = gpuRing != "0";
  cfg->gpuRingShared = gpuRing == "shared";
  static_assert(kMaxPeerRingChannels == 32, "WEFT_MAX_CTAS's row says 1 to 32");
  WEFT_CHECK(configSize("WEFT_MAX_CTAS", &v));
  cfg->maxCtas = static_cast<int>(v);
  // The kernels' loops take any width; these four are NCCL_NTHREADS's, and
  // whole warps.
  std::string threads;
  WEFT_CHECK(configChoice("WEFT_NTHREADS", &threads));
  cfg->ctaThreads = std::stoi(threads);
  return weftSuccess;
}

}  // namespace

weftResult_t readCommConfig(CommConfig* cfg) {
  WEFT_CHECK(readAlgo(&cfg->algo));
  WEFT_CHECK(checkKnobsReadElsewhere());
  int64_t v = 0;
  WEFT_CHECK(configSize("WEFT_ONESHOT_MAX", &v));
  cfg->oneshotMax = static_cast<size_t>(v);
  WEFT_CHECK(configSize("WEFT_CHUNK", &v));
  cfg->chunkBytes = static_cast<size_t>(v);
  cfg->chunkForced = configIsSet("WEFT_CHUNK");
  WEFT_CHECK(configSwitch("WEFT_CHECK_CALLS", &cfg->checkCalls));
  WEFT_CHECK(configSwitch("WEFT_CHECK_THREADS", &cfg->checkThreads));
  WEFT_CHECK(configSize("WEFT_CHECK_RADIX", &v));
  cfg->checkRadix = static_cast<int>(v);
  WEFT_CHECK(readSocketConfig(cfg));
  WEFT_CHECK(readWaitConfig(cfg));
  WEFT_CHECK(readShmAndIbConfig(cfg));
  return readGpuConfig(cfg);
}

}  // namespace weft

void weftComm::markBroken(weftResult_t r, const std::string& text) {
  std::lock_guard<std::mutex> lock(failMu);
  if (failure != weftSuccess) return;
  failure = r;
  failureText = text;
  broken.store(true, std::memory_order_release);
  // One line per failure: the log prefix has host, pid and rank; the text
  // names the call and the peer; the transports in use complete it.
  const int local = shm ? shm->localRanks() - 1 : 0;
  const char* network = ib ? "verbs" : "tcp";  // what reaches peers off this node
  std::string transport = local == 0 ? network : local == nranks - 1 ? "shm" : "shm+";
  if (local > 0 && local < nranks - 1) transport += network;
  WEFT_WARN(COLL, "rank %d of %d: communicator failed (transport %s): %s", rank, nranks,
            transport.c_str(), text.c_str());
  // Peers blocked on us (a ring neighbour waiting for data we will never
  // send) learn at once that we left, instead of after WEFT_TIMEOUT. The
  // bootstrap stays up: weftCommShrink needs it.
  if (tcp) tcp->shutdownAll();
}

weftComm::~weftComm() {
  closeBy = weft::Clock::now();
  if (!aborted.load())
    closeBy +=
        std::chrono::microseconds(static_cast<int64_t>(std::min(config.timeoutSec, 1e9) * 1e6));
  closing.store(true, std::memory_order_release);
  progress.stop();
  // Replicas' RDMA registrations on our verbs memory go before it does.
  weft::dropReplicaRegionsOf(this);
  // No request runs any more: release the streams still waiting on staging.
  // Destroy gives streams that are draining a moment to free their blocks
  // here; what a stream may still use goes to the reaper (staging_reaper.h).
  bool streamsPast = true;
  if (streamStaging)
    streamsPast = streamStaging->shutdown(
        std::min(closeBy, weft::Clock::now() + std::chrono::milliseconds(100)));
  weft::closeGpuPeerRing(this, streamsPast);
  copy.reset();
  board.reset();
  node.reset();  // before the shm transport whose boards it reads
  channels.reset();
  shm = nullptr;
  ib = nullptr;
  tcp = nullptr;
  while (!ownedTransports.empty()) ownedTransports.pop_back();
  bootstrap.reset();
  if (staging != nullptr) munmap(staging, stagingBytes);
}
