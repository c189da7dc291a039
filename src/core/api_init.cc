// Communicator lifecycle entry points of the C ABI: unique ids, init (by id,
// all-in-one-process, from the environment), destroy and abort (queries: api_query.cc).
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "base/config.h"
#include "base/device_runtime.h"
#include "base/error.h"
#include "base/fd_limit.h"
#include "base/log.h"
#include "bootstrap/root.h"
#include "bootstrap/standby_pool.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "core/config_agree.h"
#include "core/launch_env.h"
#include "core/tune_init.h"
#include "transports/transport_setup.h"

using namespace weft;

namespace {

weftResult_t randomSecret(uint8_t* out) {
  size_t got = 0;
  while (got < kSecretBytes) {
    ssize_t n = getrandom(out + got, kSecretBytes - got, 0);
    if (n < 0) return setError(weftSystemError, "getrandom failed: %s", strerror(errno));
    got += static_cast<size_t>(n);
  }
  return weftSuccess;
}

// Staging: one slot per stream for the ring, or nranks * WEFT_ONESHOT_MAX for the
// one-round algorithm, whichever is larger. Touched now, so no collective ever
// takes a first-touch page fault (microseconds per 4 KiB page, more in a VM).
weftResult_t allocStaging(weftComm* c) {
  c->ctx.slotBytes = c->config.chunkBytes + 64;
  size_t ring = c->ctx.slotBytes * c->config.nstreams;
  size_t oneshot = oneshotStagingBytes(c->nranks, c->config.oneshotMax);
  size_t bytes = std::max(ring, oneshot);
  bytes = (bytes + (2u << 20) - 1) & ~((2u << 20) - 1);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return setError(weftSystemError, "cannot map %zu bytes of staging: %s", bytes, strerror(errno));
  madvise(p, bytes, MADV_HUGEPAGE);
  // Touched now: what every pipelined call uses (the ring's slots, one huge
  // page at least). The rest, sized for the one-round allreduce's n pieces,
  // is touched only as far as calls use it, so a rank's memory does not grow
  // with n for calls that never need it.
  std::memset(p, 0, std::min(bytes, std::max(ring, size_t{2} << 20)));
  c->staging = static_cast<char*>(p);
  c->stagingBytes = bytes;
  return weftSuccess;
}

// WEFT_SPIN_US=auto: no spinning where the node's ranks outnumber its CPUs
// (base/cpu_share.h says why). Every rank of a node reaches the same verdict.
void settleSpin(weftComm* c) {
  const NodeCpus node = nodeCpusOf(c->places, c->rank);
  if (node.oversubscribed) noteOversubscribed();
  if (!c->config.spinAuto) return;
  c->config.spinUs = node.oversubscribed ? 0 : kAutoSpinUs;
  const std::string cpus = node.cpus > 0 ? std::to_string(node.cpus) : "unknown";
  WEFT_INFO(INIT, "rank %d: %d rank(s) of this node on %s CPU(s)%s: waiters spin %lld us", c->rank,
            node.ranks, cpus.c_str(), node.oversubscribed ? ", oversubscribed" : "",
            static_cast<long long>(c->config.spinUs));
}

// The transports' options (transports/transport_setup.h), from the knobs.
TransportOptions transportOptions(const CommConfig& config) {
  TransportOptions o;
  o.tcp.nstreams = config.nstreams;
  o.tcp.spliceMin = config.spliceMin;
  o.tcp.perDirection = config.bulkMin > 0;
  o.tcp.lanes = config.socketLanes;
  o.tcp.congestion = config.socketCongestion;
  o.tcp.onUse = config.connectOnUse;
  o.tcp.bulkMin = config.bulkMin;
  o.shmEnabled = config.shmEnabled;
  o.shmFifoBytes = config.shmFifoBytes;
  o.shmFifoSet = config.shmFifoSet;
  o.ibEnabled = config.ibEnabled;
  o.ib.nstreams = config.nstreams;
  o.ib.qpsPerStream = config.ibQps;
  o.ib.ringBytes = config.ibBufferBytes;
  o.ib.ringBytesSet = config.ibBufferSet;
  o.ib.zcopyMin = config.ibZcopyMin;
  o.ib.regCacheBytes = config.ibRegCacheBytes;
  o.ib.regPersist = config.ibRegPersist;
  o.ib.rdmacm = config.ibRdmacm;
  o.ib.timeoutSec = config.timeoutSec;
  return o;
}

// Every transport of the registry, set up from the bootstrap; the channel
// tables take, per peer, the first that reaches it (TCP, last, reaches all).
weftResult_t setUpCommTransports(weftComm* c) {
  WEFT_CHECK(setUpTransports(*c->bootstrap, c->places, transportOptions(c->config),
                             &c->ownedTransports, &c->transports));
  for (const std::unique_ptr<Transport>& t : c->ownedTransports) {
    if (auto* tcp = dynamic_cast<TcpTransport*>(t.get())) c->tcp = tcp;
    if (auto* shm = dynamic_cast<ShmTransport*>(t.get())) c->shm = shm;
    if (auto* ib = dynamic_cast<IbTransport*>(t.get())) c->ib = ib;
  }
#ifdef WEFT_HAVE_VERBS
  if (c->ib && c->config.bindProgress) c->progress.setCpus(c->ib->device().nearCpus());
#endif
  Doorbell* bell = c->shm ? c->shm->doorbell() : nullptr;
  const int nranks = c->nranks, nstreams = c->tcp->nstreams();
  c->channels = std::make_unique<PeerChannels>(c->transports, nranks, nstreams, bell);
  c->headerChannels = std::make_unique<PeerChannels>(c->transports, nranks, nstreams, bell, true);
  return weftSuccess;
}

// What the collectives run with (collectives/coll_context.h).
void fillContext(weftComm* c) {
  CollContext& ctx = c->ctx;
  ctx.rank = c->rank;
  ctx.nranks = c->nranks;
  ctx.channels = c->channels.get();
  ctx.scratch = &c->scratch;
  ctx.p2p = &c->p2pWork;
  ctx.run.doorbell = c->channels->doorbell();
  ctx.staging = c->staging;
  ctx.stagingBytes = c->stagingBytes;
  ctx.chunkBytes = c->config.chunkBytes;
  ctx.stableCallMax = c->config.spliceMin > 0 ? c->config.spliceMaxCall : 0;
  ctx.run.abortFlag = &c->aborted;
  ctx.run.timeoutSec = c->config.timeoutSec;
  ctx.run.spinUs = c->config.spinUs;
  ctx.run.yieldUs = c->config.yieldUs;
  c->check.rank = c->rank;
  c->check.nranks = c->nranks;
  c->check.radix = c->config.checkRadix;
  c->check.channels = c->headerChannels.get();
  ctx.run.check = &c->check;
}

// The single-copy path, where every rank is on this node.
weftResult_t setUpLocalCopy(weftComm* c) {
  if (!c->node) return weftSuccess;
  WEFT_CHECK(c->node->connect(c->ctx.run, c->config.shmMap));
  if (c->node->readable()) c->copy = std::make_unique<LocalCopy>(c->board.get(), c->node.get());
  WEFT_INFO(INIT, "rank %d: single-copy path %s%s", c->rank, c->copy ? "on" : "off",
            c->copy ? (c->copy->sharing()
                           ? " (outboxes, shared buffers mapped)"
                           : " (cross-memory attach only: WEFT_SHM_MAP=0, or peers cannot map)")
                    : "");
  return weftSuccess;
}

// How long a failed init waits for the root's word on another rank: the
// root learns of a death at once, a cascade takes a few poll periods.
constexpr int kNoticeWaitMs = 300;

weftResult_t initSteps(weftComm* c, int nranks, const UniqueIdBody& id, int rank) {
  c->rank = rank;
  c->nranks = nranks;
  c->ownerPid = getpid();
  logSetRank(rank);
  WEFT_CHECK(readCommConfig(&c->config));
  const std::string who = "a rank of a " + std::to_string(nranks) + "-rank job";
  // Connection A to every peer may be needed (made on first use, and the
  // first checked call's header goes to all); lanes come with large calls, to
  // the peers they use (room for all of them if the hard limit allows).
  const size_t atInit = meshSockets(nranks, c->config.nstreams, 0);
  const size_t mesh = meshSockets(nranks, c->config.nstreams, c->config.bulkLanes());
  WEFT_CHECK(ensureFdRoom(atInit, mesh + kFdsBesideMesh, who.c_str()));
  c->bootstrap = std::make_unique<Bootstrap>();
  WEFT_CHECK(c->bootstrap->init(id, rank, nranks, &c->aborted));
  WEFT_CHECK(checkJobWideConfig(*c->bootstrap));  // first: later steps depend on them
  WEFT_CHECK(gatherRankPlaces(*c->bootstrap, &c->places, &c->fabric));
  settleSpin(c);
  WEFT_CHECK(setUpCommTransports(c));
  if (c->shm && c->shm->localRanks() == nranks) {
    c->node = std::make_unique<NodeMemory>(c->shm, rank, nranks);
    c->board = std::make_unique<LocalBoard>(c->node.get());
  }
  WEFT_CHECK(allocStaging(c));
  fillContext(c);
  WEFT_CHECK(setUpLocalCopy(c));
  WEFT_CHECK(setupTopoAndTuner(c));
  WEFT_CHECK(setUpGpuPeerRing(c));
  // Every rank is connected before any returns: a later collective never meets a half-built peer.
  if (nranks > 1) WEFT_CHECK(c->bootstrap->barrier());
  WEFT_INFO(INIT, "rank %d of %d ready (%d TCP stream(s) per peer, chunk %zu B)", rank, nranks,
            c->config.nstreams, c->config.chunkBytes);
  return weftSuccess;
}

// Init, and its end reported to the rendezvous root. A failure caused by
// another rank's death or failure (the root's notice; a cascade of closed
// connections may arrive first) is reported with the root's sentence, which
// names the rank where it began.
weftResult_t initComm(weftComm* c, int nranks, const UniqueIdBody& id, int rank) {
  weftResult_t r = initSteps(c, nranks, id, rank);
  if (!c->bootstrap) return r;
  std::string notice;
  // Only a failure that can follow from another rank's: a broken or silent
  // connection, or the abort the watch raised. A rank's own refusal (a knob
  // that differs, no memory) keeps its own code and sentence.
  const bool consequence = r == weftRemoteError || r == weftTimeout || c->aborted.load();
  if (r != weftSuccess && consequence && c->bootstrap->peerFailure(kNoticeWaitMs, &notice))
    r = setError(weftRemoteError, "%s (this rank stopped at: %s)", notice.c_str(),
                 lastError().c_str());
  // A notice that came as this rank finished: the dead rank passed the last
  // barrier but the job cannot run without it (and the watch raised abort).
  c->bootstrap->stopWatch();
  if (r == weftSuccess && c->bootstrap->peerFailure(0, &notice))
    r = setError(weftRemoteError, "%s", notice.c_str());
  const std::string sentence = r == weftSuccess ? "" : lastError();
  c->bootstrap->finishInit(r == weftSuccess, sentence);  // its own send errors do not count
  if (r != weftSuccess) setErrorString(r, sentence);
  return r;
}

}  // namespace

extern "C" weftResult_t weftGetUniqueId(weftUniqueId* uniqueId) {
  clearError();
  if (uniqueId == nullptr)
    return setError(weftInvalidArgument, "weftGetUniqueId: uniqueId is NULL");
  UniqueIdBody body{};
  body.magic = kWireMagic;
  body.version = kWireVersion;
  WEFT_CHECK(randomSecret(body.secret));
  SockAddr addr;
  std::string ifname;
  WEFT_CHECK(pickInterface(&addr, &ifname));
  addr.setPort(0);
  SockAddr bound;
  WEFT_CHECK(RootServer::start(addr, body.secret, false, &bound));
  body.root = toWire(bound);
  packUniqueId(body, uniqueId->internal);
  WEFT_INFO(BOOTSTRAP, "unique id: root at %s (%s)", bound.str().c_str(), ifname.c_str());
  return weftSuccess;
}

extern "C" weftResult_t weftUniqueIdToString(const weftUniqueId* id, char* str, size_t len) {
  clearError();
  if (id == nullptr) return setError(weftInvalidArgument, "weftUniqueIdToString: uniqueId is NULL");
  if (str == nullptr || len < WEFT_UNIQUE_ID_STRLEN)
    return setError(weftInvalidArgument, "weftUniqueIdToString: str must hold %d bytes",
                    WEFT_UNIQUE_ID_STRLEN);
  const std::string text = toHex(id->internal, WEFT_UNIQUE_ID_BYTES);
  std::memcpy(str, text.c_str(), text.size() + 1);
  return weftSuccess;
}

extern "C" weftResult_t weftUniqueIdFromString(const char* str, weftUniqueId* id) {
  clearError();
  if (str == nullptr || id == nullptr)
    return setError(weftInvalidArgument, "weftUniqueIdFromString: %s is NULL",
                    str ? "uniqueId" : "str");
  if (std::strlen(str) != 2 * WEFT_UNIQUE_ID_BYTES)
    return setError(weftInvalidArgument,
                    "weftUniqueIdFromString: str has %zu characters, expected %d hex digits",
                    std::strlen(str), 2 * WEFT_UNIQUE_ID_BYTES);
  weftUniqueId read;
  const int bad = fromHex(str, WEFT_UNIQUE_ID_BYTES, read.internal);
  if (bad >= 0)
    return setError(weftInvalidArgument,
                    "weftUniqueIdFromString: str has a non-hex character at %d", bad);
  *id = read;
  return weftSuccess;
}

extern "C" weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId,
                                         int rank) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftCommInitRank: comm is NULL");
  *comm = nullptr;
  if (nranks < 1 || nranks > kMaxRanks)
    return setError(weftInvalidArgument, "weftCommInitRank: nranks=%d must be in [1, %d]", nranks,
                    kMaxRanks);
  if (rank < 0 || rank >= nranks)
    return setError(weftInvalidArgument, "weftCommInitRank: rank=%d must be in [0, nranks=%d)",
                    rank, nranks);
  UniqueIdBody body;
  std::string why;
  if (!unpackUniqueId(commId.internal, &body, &why))
    return setError(weftInvalidArgument, "weftCommInitRank: commId is invalid: %s", why.c_str());
  auto* c = new weftComm();
  weftResult_t r = initComm(c, nranks, body, rank);
  if (r != weftSuccess) {
    std::string msg = "weftCommInitRank (rank " + std::to_string(rank) + " of " +
                      std::to_string(nranks) + "): " + lastError();
    delete c;
    return setErrorString(r, msg);
  }
  registerComm(c);
  *comm = c;
  return weftSuccess;
}

namespace {

// The CUDA device each rank's thread of weftCommInitAll selects before its
// init, which picks the GPU its ring runs on (-1: leave the thread as it is).
// A new thread starts on device 0, not on the caller's device: without this a
// caller on device 3 got every rank's ring on device 0. devlist NULL: the
// caller's current device for every rank, if the process has loaded CUDA
// (weft does not load it for a process that has not). Each listed device is
// selected once here, so a bad ordinal fails before any rank waits for it.
weftResult_t initAllDevices(int ndev, const int* devlist, std::vector<int>* devices) {
  DeviceRuntime* rt = deviceRuntime();
  devices->assign(static_cast<size_t>(ndev), -1);
  if (devlist == nullptr) {
    int current = -1;
    if (rt->mayHaveDeviceMemory() && rt->whyUnusable().empty() &&
        rt->currentDevice(&current) == weftSuccess)
      devices->assign(static_cast<size_t>(ndev), current);
    clearError();  // no device to propagate is no failure: the ranks stage
    return weftSuccess;
  }
  const std::string why = rt->whyUnusable();
  if (!why.empty())
    return setError(weftInvalidArgument,
                    "weftCommInitAll: devlist is set but no CUDA device is usable (%s); pass NULL",
                    why.c_str());
  for (int i = 0; i < ndev; ++i) {
    if (devlist[i] < 0)
      return setError(weftInvalidArgument, "weftCommInitAll: devlist[%d]=%d is not a device", i,
                      devlist[i]);
    int saved = -1;
    if (rt->beginEnqueue(devlist[i], &saved) != weftSuccess)
      return setError(weftInvalidArgument, "weftCommInitAll: devlist[%d]=%d: %s", i, devlist[i],
                      lastError().c_str());
    rt->endEnqueue(saved);
    (*devices)[static_cast<size_t>(i)] = devlist[i];
  }
  return weftSuccess;
}

}  // namespace

extern "C" weftResult_t weftCommInitAll(weftComm_t* comms, int ndev, const int* devlist) {
  clearError();
  if (comms == nullptr) return setError(weftInvalidArgument, "weftCommInitAll: comms is NULL");
  if (ndev < 1)
    return setError(weftInvalidArgument, "weftCommInitAll: ndev=%d must be at least 1", ndev);
  std::vector<int> devices;
  WEFT_CHECK(initAllDevices(ndev, devlist, &devices));
  // ndev ranks' sockets and the root's, all in this process; raised once here
  // because the ranks' own checks would each count the others' as room.
  CommConfig config;
  WEFT_CHECK(readCommConfig(&config));
  const std::string who = "weftCommInitAll of " + std::to_string(ndev) + " ranks";
  const size_t atInit = static_cast<size_t>(ndev) * meshSockets(ndev, config.nstreams, 0);
  const size_t mesh =
      static_cast<size_t>(ndev) * meshSockets(ndev, config.nstreams, config.bulkLanes());
  WEFT_CHECK(
      ensureFdRoom(atInit, mesh + static_cast<size_t>(ndev) * (kFdsBesideMesh + 1), who.c_str()));
  weftUniqueId id;
  WEFT_CHECK(weftGetUniqueId(&id));
  std::vector<weftResult_t> results(ndev, weftSuccess);
  std::vector<std::string> errors(ndev);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i) {
    threads.emplace_back([&, i] {
      int saved = -1;  // the thread ends with its rank's device selected
      if (devices[i] >= 0 && deviceRuntime()->beginEnqueue(devices[i], &saved) != weftSuccess) {
        results[i] = weftUnhandledCudaError;
        errors[i] = "selecting device " + std::to_string(devices[i]) + ": " + lastError();
        return;
      }
      results[i] = weftCommInitRank(&comms[i], ndev, id, i);
      if (results[i] != weftSuccess) errors[i] = lastError();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < ndev; ++i) {
    if (results[i] == weftSuccess) continue;
    for (int j = 0; j < ndev; ++j)
      if (results[j] == weftSuccess) weftCommAbort(comms[j]);
    for (int j = 0; j < ndev; ++j) comms[j] = nullptr;
    return setErrorString(results[i], "weftCommInitAll: " + errors[i]);
  }
  return weftSuccess;
}

extern "C" weftResult_t weftCommInitFromEnv(weftComm_t* comm) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftCommInitFromEnv: comm is NULL");
  *comm = nullptr;
  LaunchEnv env;
  WEFT_CHECK(readLaunchEnv(&env));
  if (env.standby)
    return setError(weftInvalidUsage,
                    "weftCommInitFromEnv: this process is a standby (launcher rank %d, the last "
                    "WEFT_STANDBYS of %s): call weftStandbyWait (weftStandbyLaunched tells)",
                    env.rank, env.source.c_str());
  UniqueIdBody body;
  WEFT_CHECK(uniqueIdForLaunch(env, &body));
  weftUniqueId id;
  packUniqueId(body, id.internal);
  WEFT_CHECK(weftCommInitRank(comm, env.worldSize, id, env.rank));
  // With a standby pool, this process's lifeline tells it when the process
  // ends, whatever launched it (bootstrap/standby_pool.h). Without one the
  // job still runs, so a pool that cannot be reached is a warning.
  const std::string pool = configString("WEFT_STANDBY_ADDR");
  int64_t standbys = 0;  // readLaunchEnv has checked it
  if (configSize("WEFT_STANDBYS", &standbys) != weftSuccess) standbys = 0;
  if (!pool.empty() &&
      standbyLifeline(pool, env.rank, env.worldSize, static_cast<int>(standbys)) != weftSuccess) {
    WEFT_WARN(INIT, "rank %d: no lifeline to the standby pool (%s): a replace must name the dead",
              env.rank, lastError().c_str());
    clearError();
  }
  return weftSuccess;
}

extern "C" weftResult_t weftCommDestroy(weftComm_t comm) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftCommDestroy: comm is NULL");
  WEFT_CHECK(retireIdleComm(comm, "weftCommDestroy"));
  freeRetiredComm(comm, "weftCommDestroy");
  return weftSuccess;
}

extern "C" weftResult_t weftCommAbort(weftComm_t comm) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftCommAbort: comm is NULL");
  // Unregistered first: of two threads aborting it at once, one frees it.
  if (!unregisterComm(comm))
    return setError(weftInvalidArgument, "weftCommAbort: comm is not a live communicator");
  comm->aborted.store(true);
  // Wake every wait: sockets fail at once, loops see the flag within 100 ms.
  if (comm->tcp) comm->tcp->shutdownAll();
  if (comm->bootstrap) comm->bootstrap->shutdownAll();
  freeRetiredComm(comm, "weftCommAbort");
  return weftSuccess;
}
