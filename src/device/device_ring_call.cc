// One collective on the GPU ring (device_ring.h): its argument block, its
// stream operations, and the progress thread's watch over its kernel.
#include <unistd.h>

#include <cstring>

#include "base/error.h"
#include "base/wait.h"
#include "bootstrap/socket.h"
#include "collectives/kernels/ring_call.h"
#include "collectives/reduce.h"
#include "core/comm.h"
#include "device/device_ring.h"
#include "device/gpu_peer_layout.h"
#include "device/gpu_peer_ring.h"
#include "device/staging_plan.h"
#include "device/stream_run.h"

namespace weft {
namespace {

static_assert(kMaxPeerRingChannels == dev::kMaxRingCtas, "one p2p channel per CTA");

// Each channel's message counts once a call is over: the proxy's goal.
struct RingEnd {
  uint64_t send[kMaxPeerRingChannels];
  uint64_t recv[kMaxPeerRingChannels];
};

// A CTA is worth its launch from this many bytes of the call on.
constexpr uint64_t kCtaMinBytes = 256 << 10;

// A peer that left closes its sockets: a peek at each peer's first TCP stream
// sees the end of file (or an error). Data waiting there is a live peer.
int departedPeer(weftComm* comm) {
  if (!comm->tcp) return -1;
  for (int p = 0; p < comm->nranks; ++p) {
    if (p == comm->rank) continue;
    const int fd = comm->tcp->socketFd(p, 0);
    if (fd >= 0 && peerSocketClosed(fd)) return p;
  }
  return -1;
}

// For a timeout's error: how far the kernel got, from the status words its
// CTAs write into the argument block (ring_call.h). Read while the kernel may
// still run, so only as a hint: a CTA not started means the stream has not
// reached the kernel; one started and not done waits on a peer (or on the
// host proxy).
std::string kernelState(const StagingBlock* block) {
  const auto* args = reinterpret_cast<const dev::RingCall*>(block->data);
  int started = 0, over = 0;
  for (int c = 0; c < args->nctas; ++c) {
    const int32_t s = __atomic_load_n(&args->status[c], __ATOMIC_RELAXED);
    if (s != 0) ++started;
    if (s == dev::kRingCtaDone || s == dev::kRingCtaAborted) ++over;
  }
  if (started == 0)
    return "the kernel has not started: its stream did not reach it (an earlier operation on "
           "that stream has not finished)";
  if (over == args->nctas)
    return "every CTA of the kernel ended; the host proxy still waits to move the call's last "
           "messages, or the stream to report the kernel's end";
  return std::to_string(started) + " of its " + std::to_string(args->nctas) + " CTAs started and " +
         std::to_string(started - over) + " still wait for a peer's messages or credits";
}

// Gives up on a ring call: the communicator is marked broken first, then the
// abort word is raised. The kernel ends on that word and its stream moves on,
// so a caller that synchronised the stream and then asks
// weftCommGetAsyncError must already find the error (failStreamCall; the
// staged path keeps the same order before it raises "done").
void giveUp(weftComm* comm, StagingBlock* block, weftResult_t r) {
  failStreamCall(comm, r);
  __atomic_store_n(block->abort, 1, __ATOMIC_RELAXED);
}

std::string ringCallPrefix(const weftComm* comm, const Call& call) {
  return "rank " + std::to_string(comm->rank) + ": " + describeCall(call) + " on the GPU ring: ";
}

// Why a ring call that has not finished must stop now (the proxy failed, the
// communicator was aborted, broke or is being destroyed, the deadline passed),
// with the error set; weftSuccess to keep waiting.
weftResult_t reasonToStop(weftComm* comm, StagingBlock* block, Waiter::Idle idle, const Call& call,
                          weftResult_t proxyResult) {
  if (proxyResult != weftSuccess)
    return setError(proxyResult, "%sthe host proxy: %s", ringCallPrefix(comm, call).c_str(),
                    lastError().c_str());
  if (idle == Waiter::Idle::kAborted)
    return setError(weftInvalidUsage, "%scomm was aborted", ringCallPrefix(comm, call).c_str());
  if (idle == Waiter::Idle::kTimedOut)
    return setError(weftTimeout, "%sthe kernel did not finish within WEFT_TIMEOUT=%g s (%s)",
                    ringCallPrefix(comm, call).c_str(), comm->config.timeoutSec,
                    kernelState(block).c_str());
  if (comm->closing.load(std::memory_order_acquire) && Clock::now() >= comm->closeBy)
    return setError(weftTimeout,
                    "%sthe communicator is being destroyed and the kernel did not finish within "
                    "WEFT_TIMEOUT=%g s of that",
                    ringCallPrefix(comm, call).c_str(), comm->config.timeoutSec);
  std::lock_guard<std::mutex> lock(comm->failMu);
  if (comm->failure != weftSuccess)
    return setError(comm->failure, "%sthe communicator broke: %s",
                    ringCallPrefix(comm, call).c_str(), comm->failureText.c_str());
  return weftSuccess;
}

// After the kernel finished: the block is still ours (held until
// watchRingCall lets it go), and what the kernel wrote is visible (its stream
// raised "freed" after it). A CTA ends early only on the abort word, which
// the waiting thread raises after giving up, or enqueueRingCall when the
// launch failed (then no CTA started): anything else is a weft bug.
weftResult_t checkCtaStatus(const weftComm* comm, const StagingBlock* block, const Call& call) {
  const auto* args = reinterpret_cast<const dev::RingCall*>(block->data);
  for (int c = 0; c < args->nctas; ++c) {
    if (args->status[c] == 0)  // enqueueRingCall raised the abort word: no kernel ran
      return setError(weftUnhandledCudaError,
                      "rank %d: %s on the GPU ring: the kernel could not be launched", comm->rank,
                      describeCall(call).c_str());
    if (args->status[c] != dev::kRingCtaDone)
      return setError(weftInternalError,
                      "rank %d: %s on the GPU ring: CTA %d of the kernel ended with status %d",
                      comm->rank, describeCall(call).c_str(), c, args->status[c]);
  }
  return weftSuccess;
}

// Waits until the kernel finished (the stream raised "freed") and, across
// nodes, until the host proxy moved every message of the call (the kernel may
// finish before its last messages left the outbox). Any reason to give up
// goes through giveUp (the error, then the abort word), so that the kernel stops.
weftResult_t waitKernel(weftComm* comm, StagingBlock* block, uint32_t gen, const Call& call) {
  Waiter waiter(comm->waitPolicy());
  Waiter::Idle idle = Waiter::Idle::kLook;  // what the last pass without progress was told
  Clock::time_point nextPeek = Clock::now();
  Clock::time_point goneAt = Clock::time_point::min();  // when a departed peer was first seen
  RingProxy& proxy = comm->peerRing.proxy;
  const bool proxied = proxy.active();
  auto finished = [&] {
    return flagReached(__atomic_load_n(block->freed, __ATOMIC_ACQUIRE), gen) &&
           (!proxied || proxy.callDone());
  };
  for (;;) {
    bool moved = false;
    weftResult_t r = proxied ? proxy.pump(&moved) : weftSuccess;
    if (r == weftSuccess && finished()) break;
    r = reasonToStop(comm, block, idle, call, r);
    if (r == weftSuccess && Clock::now() >= nextPeek) {
      nextPeek = Clock::now() + std::chrono::milliseconds(10);
      const int gone = departedPeer(comm);
      // A peer may leave right after its part of the call, while ours still
      // finishes: give the kernel a grace second before failing the call.
      if (gone >= 0 && goneAt == Clock::time_point::min()) goneAt = Clock::now();
      if (gone >= 0 && Clock::now() - goneAt > std::chrono::seconds(1))
        r = setError(weftRemoteError, "%srank %d left (its connection closed)",
                     ringCallPrefix(comm, call).c_str(), gone);
    }
    // A call that finished while we looked (a peer may leave right after
    // the last message) succeeded: a departure or failure after it is the
    // next call's to report.
    if (r != weftSuccess && finished()) break;
    if (r != weftSuccess) {
      giveUp(comm, block, r);
      return r;
    }
    if (moved) {  // WEFT_TIMEOUT bounds a stall, not a long call that keeps moving
      waiter.progressed();
      idle = Waiter::Idle::kLook;
    } else {
      idle = waiter.idle();
      if (idle == Waiter::Idle::kSleep) Waiter::nap();
    }
  }
  return checkCtaStatus(comm, block, call);
}

// The progress thread's part, in API order with every other call.
// `end`: each channel's message count once the call is over (the proxy's goal).
weftResult_t watchRingCall(weftComm* comm, const Call& call, StagingBlock* block, uint32_t gen,
                           const RingEnd& end) {
  comm->peerRing.proxy.beginCall(end.send, end.recv);
  weftResult_t r = waitStreamReady(comm, block, gen, call);
  if (r == weftSuccess && comm->config.checkCalls) r = checkCallOnly(comm, call);
  if (r != weftSuccess) giveUp(comm, block, r);
  // Release: the abort word (and the argument block, written before submit)
  // is visible to the kernel that this lets start.
  __atomic_store_n(block->done, gen, __ATOMIC_RELEASE);
  if (r == weftSuccess) r = waitKernel(comm, block, gen, call);
  comm->streamStaging->unhold(block);  // the last touch of the block (staging_pool.h)
  // A CTA that ended badly after the kernel finished (giveUp did not run).
  if (r != weftSuccess) failStreamCall(comm, r);
  return r;
}

weftResult_t deviceAddressOf(const PointerInfo& info, const void* ptr, const void** out) {
  if (info.kind != MemKind::kPinnedHost) {
    *out = ptr;  // device and managed memory: the same address on the GPU
    return weftSuccess;
  }
  return deviceRuntime()->deviceAddress(ptr, out);
}

int32_t ringKindOf(CollKind kind) {
  switch (kind) {
    case CollKind::kAllGather:
      return dev::kRingAllGather;
    case CollKind::kReduceScatter:
      return dev::kRingReduceScatter;
    case CollKind::kBroadcast:
      return dev::kRingBroadcast;
    case CollKind::kReduce:
      return dev::kRingReduce;
    default:
      return dev::kRingAllReduce;
  }
}

// Fills the kernel's argument block for `call`; returns the message count of
// each channel's outgoing and incoming link through sendMsgs and recvMsgs.
weftResult_t fillArgs(weftComm* comm, const Call& call, StagingBlock* block, dev::RingCall* args,
                      uint64_t* sendMsgs, uint64_t* recvMsgs) {
  GpuPeerRing& ring = comm->peerRing;
  std::memset(args, 0, sizeof(*args));
  const void* in = nullptr;
  const void* out = nullptr;
  WEFT_CHECK(deviceAddressOf(call.buffers[0], call.args.sendbuff, &in));
  WEFT_CHECK(deviceAddressOf(call.buffers[1], call.args.recvbuff, &out));
  const void* abortWord = nullptr;
  WEFT_CHECK(deviceRuntime()->deviceAddress(block->abort, &abortWord));
  args->in = in;
  args->out = const_cast<void*>(out);
  args->count = call.args.count;
  args->rank = ring.pos;  // the kernel's place in the ring, not the communicator rank
  args->nranks = comm->nranks;
  args->elemBytes = static_cast<int32_t>(datatypeSize(call.args.datatype));
  args->kind = ringKindOf(call.kind);
  const int n = comm->nranks;
  args->rootPos = 0;
  if (args->kind == dev::kRingBroadcast || args->kind == dev::kRingReduce)
    while (args->rootPos < n && ring.rankAt[args->rootPos] != call.args.root) ++args->rootPos;
  // CTAs by the bytes a link carries: a block-wise collective moves n blocks.
  const bool blocks = args->kind == dev::kRingAllGather || args->kind == dev::kRingReduceScatter;
  const uint64_t moved = args->count * static_cast<uint64_t>(args->elemBytes) *
                         (blocks ? static_cast<uint64_t>(n) : 1u);
  args->nctas = ringCtasFor(comm, moved);
  args->abort = static_cast<const int*>(abortWord);
  args->rankAt = ring.rankAtDevice;
  for (int c = 0; c < args->nctas; ++c) {
    uint64_t begin = 0, len = 0;
    dev::ringCtaShare(args->count, args->nctas, c, &begin, &len);
    // Our outgoing link starts at our position, the incoming one before it.
    sendMsgs[c] = dev::ringCallMessages(args->kind, len, n, kRingSlotBytes, args->elemBytes,
                                        ring.pos, args->rootPos);
    recvMsgs[c] = dev::ringCallMessages(args->kind, len, n, kRingSlotBytes, args->elemBytes,
                                        (ring.pos + n - 1) % n, args->rootPos);
    args->sendSeq[c] = ring.sendSeq[c];
    args->recvSeq[c] = ring.recvSeq[c];
    args->send[c] = ring.send[c];
    args->recv[c] = ring.recv[c];
    args->send[c].abort = args->recv[c].abort = args->abort;
  }
  return weftSuccess;
}

}  // namespace

int ringCtasFor(const weftComm* comm, uint64_t linkBytes) {
  const GpuPeerRing& ring = comm->peerRing;
  if (ring.state != GpuPeerRing::State::kOn || linkBytes == 0) return 0;
  const uint64_t want = linkBytes / kCtaMinBytes + (linkBytes % kCtaMinBytes != 0 ? 1 : 0);
  return want > static_cast<uint64_t>(ring.channels) ? ring.channels : static_cast<int>(want);
}

weftResult_t enqueueRingCall(weftComm* comm, const Call& call) {
  GpuPeerRing& ring = comm->peerRing;
  DeviceRuntime* rt = deviceRuntime();
  const int device = deviceOfBuffers(call, 2);  // a ring call has both (count > 0)
  if (device >= 0 && device != ring.device)
    return setError(weftInvalidUsage,
                    "%s: its buffers are on CUDA device %d, but this communicator's GPU ring runs "
                    "on device %d (current when the communicator was created); use one device "
                    "per communicator, as with NCCL",
                    describeCall(call).c_str(), device, ring.device);
  if (!comm->streamStaging) comm->streamStaging.reset(new StagingPool(rt));
  StagingBlock* block = nullptr;
  // Held: the watch below reads the block's "freed" (staging_pool.h).
  WEFT_CHECK(comm->streamStaging->acquire(sizeof(dev::RingCall), &block, true));
  auto* args = reinterpret_cast<dev::RingCall*>(block->data);
  uint64_t sendMsgs[kMaxPeerRingChannels] = {}, recvMsgs[kMaxPeerRingChannels] = {};
  weftResult_t r = fillArgs(comm, call, block, args, sendMsgs, recvMsgs);
  if (r != weftSuccess) {
    comm->streamStaging->release(block);
    return r;
  }
  const uint32_t gen = block->gen;
  void* stream = call.stream;
  int saved = -1;
  r = rt->beginEnqueue(ring.device, &saved);
  if (r != weftSuccess) {
    comm->streamStaging->release(block);
    return r;
  }
  // The stream's wait for "done" goes first, then the watch that raises it
  // is queued, and only then is the kernel launched. A launch may synchronise
  // the context (CUDA may load the kernel then, or grow its stack, though
  // prepareKernels does both at init): it then waits for our stream's "wait
  // done", which must not depend on anything after the launch.
  r = rt->writeFlagAsync(block->ready, gen, stream);
  const bool readyEnqueued = r == weftSuccess;
  if (r == weftSuccess) r = rt->waitFlagAsync(block->done, gen, stream);
  if (r != weftSuccess) {
    rt->endEnqueue(saved);
    if (!readyEnqueued) {
      comm->streamStaging->release(block);
      return r;
    }
    // The stream may still write "ready": give the block up (no "freed" can
    // follow a failure), and raise "done" in case the wait got enqueued.
    __atomic_store_n(block->abort, 1, __ATOMIC_RELAXED);
    __atomic_store_n(block->done, gen, __ATOMIC_RELEASE);
    comm->streamStaging->abandon(block);
    return r;
  }
  RingEnd end;
  for (int c = 0; c < kMaxPeerRingChannels; ++c) {
    end.send[c] = ring.sendSeq[c] += sendMsgs[c];
    end.recv[c] = ring.recvSeq[c] += recvMsgs[c];
  }
  auto* req = new weftRequest();
  req->detached = true;  // nobody waits for it: the stream does
  req->work = [comm, call, block, gen, end] { return watchRingCall(comm, call, block, gen, end); };
  comm->progress.submit(req);
  // Allgather and broadcast reduce nothing: their op field is whatever the
  // caller left there, so they launch as sum (the launcher ignores it).
  const bool copies = call.kind == CollKind::kAllGather || call.kind == CollKind::kBroadcast;
  const weftResult_t launched = rt->launchRing(call.args.datatype, copies ? weftSum : call.args.op,
                                               args, args->nctas, comm->config.ctaThreads, stream);
  const std::string why = launched != weftSuccess ? lastError() : std::string();
  // A failed launch: the abort word makes the queued watch fail the call.
  if (launched != weftSuccess) __atomic_store_n(block->abort, 1, __ATOMIC_RELAXED);
  // "freed" lets the watch and the pool move on; without it the watch fails
  // the call at WEFT_TIMEOUT and the block is never reused.
  r = rt->writeFlagAsync(block->freed, gen, stream);
  rt->endEnqueue(saved);
  return launched != weftSuccess ? setErrorString(launched, why) : r;
}

}  // namespace weft
