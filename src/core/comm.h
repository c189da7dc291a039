// The communicator: what weftCommInitRank builds and every call uses. It owns
// the bootstrap, the transports, the staging memory, the progress thread and
// the failure state. Field order is setup order.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/call_header.h"
#include "base/config.h"
#include "base/wait.h"
#include "bootstrap/bootstrap.h"
#include "collectives/algo_id.h"
#include "collectives/coll_context.h"
#include "collectives/comm_topo.h"
#include "collectives/local_board.h"
#include "collectives/local_copy.h"
#include "collectives/p2p_workspace.h"
#include "collectives/tuner.h"
#include "core/premul_op.h"
#include "core/request.h"
#include "device/gpu_peer_ring.h"
#include "device/staging_pool.h"
#include "topo/rank_place.h"
#include "transports/ib/ib_available.h"
#include "transports/peer_channels.h"
#include "transports/shm/node_memory.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {

struct CommConfig {
  AlgoId algo = AlgoId::kAuto;  // WEFT_ALGO: the one algorithm allowed (kAuto: any)
  size_t oneshotMax = 64 << 10;
  size_t chunkBytes = 512 << 10;
  bool chunkForced = false;  // WEFT_CHUNK set: the tuner keeps it
  int nstreams = 1;
  size_t bulkMin = 64 << 10;  // WEFT_SOCKET_PER_DIRECTION (0: no connection B)
  int socketLanes = 2;        // WEFT_SOCKET_LANES
  bool connectOnUse = true;   // WEFT_RUNTIME_CONNECT
  // Connections per bulk direction and stream (0 without them).
  int bulkLanes() const { return bulkMin > 0 ? socketLanes : 0; }
  size_t spliceMin = 64 << 10;            // WEFT_SOCKET_SPLICE (0: off)
  size_t spliceMaxCall = 512 << 10;       // WEFT_SOCKET_SPLICE_MAX
  std::string socketCongestion = "auto";  // WEFT_SOCKET_CONGESTION
  double timeoutSec = configDefaultNumber("WEFT_TIMEOUT");
  // WEFT_SPIN_US; auto: kAutoSpinUs (base/wait.h), or 0 where the node has more
  // ranks than CPUs (base/cpu_share.h), settled at init once the ranks' places are known.
  int64_t spinUs = kAutoSpinUs;
  bool spinAuto = true;
  int64_t yieldUs = static_cast<int64_t>(configDefaultNumber("WEFT_YIELD_US"));
  bool shmEnabled = true;
  bool shmMap = true;        // WEFT_SHM_MAP
  bool bindProgress = true;  // WEFT_BIND_PROGRESS
  bool checkCalls = true;    // WEFT_CHECK_CALLS: collective-mismatch headers
  bool checkThreads = true;  // WEFT_CHECK_THREADS: headers carry the thread turn
  int checkRadix = 8;        // WEFT_CHECK_RADIX: peers per step of the call check, plus one
  size_t shmFifoBytes = 2 << 20;
  bool shmFifoSet = false;  // WEFT_SHM_FIFO given: used as is, not fitted to the node
  bool ibEnabled = true;
  size_t ibBufferBytes = 4 << 20;
  bool ibBufferSet = false;             // WEFT_IB_BUFFER given: used as is, not fitted to the job
  int ibQps = 1;                        // WEFT_IB_QPS_PER_CONNECTION
  size_t ibZcopyMin = 0;                // WEFT_IB_ZCOPY_THRESHOLD (0: off)
  size_t ibRegCacheBytes = 1ull << 30;  // WEFT_IB_REG_CACHE
  bool ibRegPersist = false;            // WEFT_IB_REG_PERSIST
  bool ibRdmacm = false;                // WEFT_IB_RDMACM
  bool gpuRing = true;                  // WEFT_GPU_RING (1 or shared)
  bool gpuRingShared = false;           // WEFT_GPU_RING=shared: processes sharing a GPU too
  int maxCtas = 8;                      // WEFT_MAX_CTAS
  int ctaThreads = 512;                 // WEFT_NTHREADS
};

// Reads WEFT_ALGO, WEFT_ONESHOT_MAX, WEFT_CHUNK, WEFT_SOCKET_NSTREAMS, WEFT_TIMEOUT,
// WEFT_SPIN_US; a bad value is weftInvalidArgument naming the variable.
weftResult_t readCommConfig(CommConfig* cfg);

}  // namespace weft

struct weftComm {
  int rank = -1;
  int nranks = 0;
  pid_t ownerPid = 0;  // calls from a forked child are refused
  weft::CommConfig config;
  std::atomic<bool> aborted{false};
  // What this communicator's waits obey (its knobs and abort flag).
  weft::WaitPolicy waitPolicy() const {
    return {&aborted, config.timeoutSec, config.spinUs, config.yieldUs};
  }
  // Set as destroy or abort begins (closeBy first): the calls on a stream still
  // waiting for their stream then give up at closeBy, one WEFT_TIMEOUT after
  // destroy began (abort: at once), so destroy waits one timeout in all, not
  // one per pending call.
  std::atomic<bool> closing{false};
  weft::Clock::time_point closeBy;
  std::unique_ptr<weft::Bootstrap> bootstrap;
  std::vector<weft::RankPlace> places;  // every rank's node, pid, GPU ring key
  weft::topo::Fabric fabric;            // WEFT_FABRIC's description, same on every rank
  // The transports set up (transports/transport_setup.h), in set-up order
  // (destroyed last first), and in the channel table's order.
  std::vector<std::unique_ptr<weft::Transport>> ownedTransports;
  std::vector<weft::Transport*> transports;
  // Those the communicator also calls directly (null when not set up).
  weft::TcpTransport* tcp = nullptr;
  weft::IbTransport* ib = nullptr;    // null without verbs (built or found)
  weft::ShmTransport* shm = nullptr;  // null when no peer shares our node or disabled
  std::unique_ptr<weft::PeerChannels> channels;
  std::unique_ptr<weft::PeerChannels> headerChannels;  // call headers: TCP's small-call channels
  // When every rank shares our node: the boards and peers' memory, the
  // one-round collectives on them, and the single-copy path (when ranks may
  // read each other's memory).
  std::unique_ptr<weft::NodeMemory> node;
  std::unique_ptr<weft::LocalBoard> board;
  std::unique_ptr<weft::LocalCopy> copy;
  char* staging = nullptr;
  size_t stagingBytes = 0;
  weft::Scratch scratch;
  weft::P2PWorkspace p2pWork;         // ctx.p2p: reused by every send/recv and all-to-all
  std::vector<weft::P2POp> p2pCalls;  // executeCalls' point-to-point list, reused
  weft::CollContext ctx;
  weft::CommTopo topo;  // nodes, views, trees (core/tune_init.cc)
  weft::Tuner tuner;
  weft::ProgressThread progress;
  // Pinned staging of calls on a CUDA stream (device/stream_call.h), made at
  // the first such call.
  std::unique_ptr<weft::StagingPool> streamStaging;
  // The p2p channels of the GPU ring (allreduce, allgather, reduce-scatter on a stream, device/
  // device_ring.h), set up at init (device/gpu_peer_ring.h).
  weft::GpuPeerRing peerRing;
  uint64_t seq = 0;  // collectives issued on this communicator
  // Collectives put on the wire (count > 0 or barrier) and the header that
  // checks every rank makes the same one (base/call_header.h).
  uint32_t collSeq = 0;
  weft::CallCheck check;
  uint32_t createCalls = 0;         // split/shrink calls so far (core/create_vote.h)
  weft::UserRedOps userOps;         // weftRedOpCreatePreMulSum's ops (core/premul_op.h)
  int lastAnySource = 0;            // where weftRecvAny's next look at the peers starts after
  std::vector<char> premulScratch;  // their scaled inputs where the output cannot hold them
  // API calls inside the communicator right now; abort waits for them to leave
  // before freeing it (they leave quickly once `aborted` is set).
  std::atomic<int> activeCalls{0};
  // The API call that owns the communicator now (a collective, point-to-point
  // call, group end, split or shrink), so that a second thread is refused
  // with a sentence instead of interleaving call numbers with the first (the
  // ranks would then pair different calls). Only try_lock'ed, never waited
  // on; recursive because a group end takes each communicator again.
  // callerDepth is touched only by the thread holding callerMu. callerFn is
  // set under registryMu as well, so that destroy's check of it and a call
  // entering exclude each other; the owner clears it just before releasing
  // callerMu, and a caller that finds callerMu held with callerFn clear
  // retries (comm.cc: takeCaller), so a refusal always names the call inside.
  std::recursive_mutex callerMu;
  std::atomic<const char*> callerFn{nullptr};  // nullptr: no call owns it
  int callerDepth = 0;
  // The thread of the last call and how many times that thread changed
  // (mod 256): call headers carry the count, so ranks whose threads took
  // turns in different orders fail instead of pairing different calls.
  // Touched only under callerMu (by the caller of submit).
  std::thread::id lastCaller;
  uint8_t threadTurns = 0;

  // The first failure that broke the communicator (peer gone, timeout); once
  // set, every later call fails with it. Guarded by failMu.
  std::mutex failMu;
  weftResult_t failure = weftSuccess;
  std::string failureText;
  // Set (release) once failure and failureText are: lets every call check for
  // a failure without taking failMu (acquire, then failMu for the text).
  std::atomic<bool> broken{false};

  ~weftComm();
  void markBroken(weftResult_t r, const std::string& text);
};

namespace weft {
// Live-communicator registry: lets every call reject a destroyed or bogus handle
// with a sentence instead of touching freed memory.
void registerComm(weftComm* comm);
bool isLiveComm(const weftComm* comm);
// Validates `comm` for an API call named `fn`: live, not aborted, same process.
weftResult_t checkComm(const weftComm* comm, const char* fn);

// Holds a communicator for the length of an API call that may block: checks it
// like checkComm and counts the call in activeCalls, atomically with respect to
// abort/destroy unregistering it. An exclusive call (the default) also owns
// the communicator: another thread's exclusive call meanwhile is refused with
// weftInvalidUsage (calls on one communicator must not overlap, docs/api.md).
class CommCall {
 public:
  CommCall(weftComm* comm, const char* fn, bool exclusive = true);
  // Moving hands the hold over (groups keep theirs in a reused vector).
  CommCall(CommCall&& other) noexcept
      : comm_(other.comm_), status_(other.status_), exclusive_(other.exclusive_) {
    other.comm_ = nullptr;
  }
  CommCall(const CommCall&) = delete;
  CommCall& operator=(const CommCall&) = delete;
  CommCall& operator=(CommCall&&) = delete;
  ~CommCall();
  weftResult_t status() const { return status_; }

 private:
  weftComm* comm_;
  weftResult_t status_;
  bool exclusive_;
};

// The thread turn (comm.h: threadTurns) of a call the current thread is
// issuing; call under a CommCall.
uint8_t takeCallerTurn(weftComm* comm);

// Unregisters `comm` if it is live; false if it is not (destroyed, aborted or
// never created). Check and removal are one critical section, so of two
// threads retiring one communicator at once exactly one gets true.
bool unregisterComm(weftComm* comm);
// weftCommDestroy's unregistering: refuses (weftInvalidUsage, naming the call)
// while another thread's exclusive call is inside `comm`, since destroy would
// free what that call uses; weftInvalidArgument if `comm` is not live.
weftResult_t retireIdleComm(weftComm* comm, const char* fn);
// Frees an unregistered communicator once no API call is inside it (waiting at
// most 5 s); a call still inside after that (wedged) keeps it allocated, with
// a WARN naming `fn`, rather than freeing it under that call.
void freeRetiredComm(weftComm* comm, const char* fn);
}  // namespace weft
