/* weft.h - the C ABI of weft, a collective communication library.
 *
 * Shaped like nccl.h so that porting is a rename: the same argument order, the
 * same datatype and reduction-op enums (same numeric values), the same result
 * codes where the meaning matches. Nothing here throws; every call returns a
 * weftResult_t and, on failure, weftGetLastError() gives a sentence that names
 * the offending argument or peer.
 *
 * Stream argument (decided before CUDA arrives, so it never changes meaning):
 *   - stream == NULL (WEFT_STREAM_HOST): host semantics. The call runs the
 *     collective on host memory and returns when it is complete on this rank
 *     (the blocking form). Use the *Async forms to overlap instead.
 *     Buffers are host memory (pageable, pinned or managed); passing CUDA
 *     device memory is weftInvalidArgument naming the buffer.
 *   - stream != NULL: a cudaStream_t. The collective is enqueued on the stream
 *     and the call returns at once, without synchronising the host, as in
 *     NCCL: it reads its inputs when the stream reaches it, and later work on
 *     the stream sees its outputs. Buffers are CUDA device, managed or pinned
 *     host memory, all of one device. Calls keep API order on a communicator,
 *     whether on a stream or not. A failure is reported by
 *     weftCommGetAsyncError (the outputs are then undefined), and the stream
 *     never stays blocked on it (nor on weftCommAbort / weftCommDestroy).
 *     Builds without CUDA, or without a usable GPU, reject a non-NULL stream
 *     with weftInvalidArgument. Inside a group, the calls on one communicator
 *     share one stream; weftGroupEnd enqueues them and returns, and
 *     weftGroupEndAsync refuses them. See docs/cuda.md.
 *
 * Threads: calls on one communicator must be made in the same order on every
 * rank and must not run concurrently from two threads (as in NCCL and MPI),
 * except weftCommAbort and weftCommGetAsyncError, which are safe from any
 * thread at any time. Different communicators are independent.
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MAJOR 0
#define WEFT_MINOR 1
#define WEFT_PATCH 0
/* Same encoding as NCCL_VERSION_CODE: major*10000 + minor*100 + patch. */
#define WEFT_VERSION_CODE (WEFT_MAJOR * 10000 + WEFT_MINOR * 100 + WEFT_PATCH)

typedef enum {
  weftSuccess = 0,
  weftUnhandledCudaError = 1,
  weftSystemError = 2,
  weftInternalError = 3,
  weftInvalidArgument = 4,
  weftInvalidUsage = 5,
  weftRemoteError = 6,
  weftInProgress = 7,
  weftTimeout = 8,
  weftNumResults = 9
} weftResult_t;

typedef enum {
  weftInt8 = 0,
  weftChar = 0,
  weftUint8 = 1,
  weftInt32 = 2,
  weftInt = 2,
  weftUint32 = 3,
  weftInt64 = 4,
  weftUint64 = 5,
  weftFloat16 = 6,
  weftHalf = 6,
  weftFloat32 = 7,
  weftFloat = 7,
  weftFloat64 = 8,
  weftDouble = 8,
  weftBfloat16 = 9,
  weftNumTypes = 10
} weftDataType_t;

typedef enum {
  weftSum = 0,
  weftProd = 1,
  weftMax = 2,
  weftMin = 3,
  weftAvg = 4, /* sum / nranks; integers divide the wrapped sum (docs/api.md) */
  /* Bitwise and, or, exclusive or: integer datatypes only (weft's, not NCCL's). */
  weftBand = 5,
  weftBor = 6,
  weftBxor = 7,
  weftNumOps = 8,
  /* Ops made by weftRedOpCreatePreMulSum take values from weftNumOps up. */
  weftMaxRedOp = 0x7fffffff
} weftRedOp_t;

/* Where the scalar of weftRedOpCreatePreMulSum lives, as in NCCL. */
typedef enum {
  /* Device memory (or any memory the GPU and host can read), read when each
   * call using the op runs: a kernel may write it on the call's stream first. */
  weftScalarDevice = 0,
  /* Host memory, read once by weftRedOpCreatePreMulSum. */
  weftScalarHostImmediate = 1
} weftScalarResidence_t;

/* Opaque 128 bytes, copied verbatim between ranks (MPI_Bcast, a file, the
 * environment as text). Holds the root's address and the job's random secret;
 * anyone holding it can join the job, so treat it as a credential. */
#define WEFT_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[WEFT_UNIQUE_ID_BYTES];
} weftUniqueId;

/* Text form of a unique id: 256 lowercase hex digits plus a NUL. */
#define WEFT_UNIQUE_ID_STRLEN (2 * WEFT_UNIQUE_ID_BYTES + 1)

typedef struct weftComm* weftComm_t;
typedef struct weftRequest* weftRequest_t;
typedef void* weftStream_t; /* a cudaStream_t, or NULL for host semantics */
#define WEFT_STREAM_HOST ((weftStream_t)0)

/* ---- version, errors ---------------------------------------------------- */
weftResult_t weftGetVersion(int* version);
const char* weftGetErrorString(weftResult_t result);
/* The sentence describing the last failed call made by this thread (comm may
 * be NULL). Empty string when the last call succeeded. */
const char* weftGetLastError(weftComm_t comm);

/* ---- unique id and communicators ---------------------------------------- */
/* Creates a fresh id and starts serving the rendezvous for it in the
 * background of this process (until every rank arrived or WEFT_TIMEOUT). */
weftResult_t weftGetUniqueId(weftUniqueId* uniqueId);
weftResult_t weftUniqueIdToString(const weftUniqueId* uniqueId, char* str, size_t len);
weftResult_t weftUniqueIdFromString(const char* str, weftUniqueId* uniqueId);

/* Collective over nranks ranks that share uniqueId. */
weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId, int rank);
/* ndev ranks in this process, one thread each; comms must hold ndev entries.
 * devlist NULL: every rank on the caller's current CUDA device, if the process
 * uses CUDA (so several ranks may share one GPU); else rank i on devlist[i], as
 * in NCCL (CUDA builds only). */
weftResult_t weftCommInitAll(weftComm_t* comms, int ndev, const int* devlist);
/* Rank, size and rendezvous from the environment, as set by weft-run
 * (WEFT_UNIQUE_ID, WEFT_RANK, WEFT_WORLD_SIZE), by WEFT_ROOT_ADDR with
 * WEFT_RANK/WEFT_WORLD_SIZE, or by torchrun (MASTER_ADDR, MASTER_PORT, RANK,
 * WORLD_SIZE). See docs/launching.md. */
weftResult_t weftCommInitFromEnv(weftComm_t* comm);
/* Waits for this rank's outstanding work, then frees the communicator. */
weftResult_t weftCommDestroy(weftComm_t comm);
/* Safe from any thread: calls blocked on this communicator in other threads
 * return weftInvalidUsage ("aborted") at once; returns within about a second
 * without waiting for peers, then frees the communicator. */
weftResult_t weftCommAbort(weftComm_t comm);
/* Safe from any thread: this rank's calls on comm that are in flight return
 * weftInvalidUsage ("revoked") at once, and every later call fails with it;
 * unlike abort the communicator stays allocated, so that weftCommShrink (and
 * weftCommDestroy) still work on it. Local: peers learn of it only as their
 * own calls with this rank fail (or time out). */
weftResult_t weftCommRevoke(weftComm_t comm);
weftResult_t weftCommCount(const weftComm_t comm, int* count);
weftResult_t weftCommUserRank(const weftComm_t comm, int* rank);
/* weftSuccess, or the error that broke the communicator in the background. */
weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError);
/* Thread blocks (CTAs) that this rank's GPU ring kernel runs for an allreduce
 * of `count` elements of `datatype` on a CUDA stream; each holds one SM while
 * it runs. Compute kernels meant to overlap the call should leave these SMs
 * free (an "SM margin": cublasSetSmCountTarget), summed over the ranks that
 * share a GPU. A reduce or broadcast of `count` takes as many; an allgather or
 * reduce-scatter of `count` per rank as many as an allreduce of count x
 * nranks. At most WEFT_MAX_CTAS. 0 when such a call would not run the ring on
 * this communicator (no GPU ring: WEFT_DEBUG=INFO says why; or count 0);
 * the ring also takes only sum, prod, max and min. */
weftResult_t weftCommGpuCtas(const weftComm_t comm, size_t count, weftDataType_t datatype,
                             int* ctas);

/* ---- user-created reduction ops ----------------------------------------- */
/* An op that multiplies each rank's input by `scalar` (one element of
 * `datatype`, this rank's own value), then sums: out = sum_r scalar_r * in_r.
 * Usable by allreduce, reduce-scatter and reduce of `datatype` on `comm`
 * only, host or CUDA buffers, until weftRedOpDestroy. Creating one is local
 * (no communication); each rank passes its own op to the call. */
weftResult_t weftRedOpCreatePreMulSum(weftRedOp_t* op, void* scalar, weftDataType_t datatype,
                                      weftScalarResidence_t residence, weftComm_t comm);
/* Frees an op of weftRedOpCreatePreMulSum; calls already issued keep theirs. */
weftResult_t weftRedOpDestroy(weftRedOp_t op, weftComm_t comm);

/* ---- collectives (blocking on host memory when stream is NULL) ---------- */
weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                           weftStream_t stream);
/* sendcount elements from each rank; recvbuff holds nranks*sendcount. In place
 * when sendbuff == recvbuff + rank*sendcount (elements). */
weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           weftDataType_t datatype, weftComm_t comm, weftStream_t stream);

/* Each rank receives recvcount elements: block `rank` of the reduction of the
 * ranks' nranks*recvcount inputs. In place when recvbuff == sendbuff + rank*recvcount. */
weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                               weftStream_t stream);
/* Copies root's sendbuff into every rank's recvbuff (sendbuff is read on root only). */
weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           weftDataType_t datatype, int root, weftComm_t comm, weftStream_t stream);
/* In-place broadcast (NCCL's legacy ncclBcast). */
weftResult_t weftBcast(void* buff, size_t count, weftDataType_t datatype, int root, weftComm_t comm,
                       weftStream_t stream);
/* The reduction lands in root's recvbuff only (recvbuff is ignored elsewhere). */
weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                        weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream);
/* Block j (count elements) of sendbuff goes to rank j, landing at block `rank` of its
 * recvbuff. Not in place: the buffers must not overlap. */
weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          weftDataType_t datatype, weftComm_t comm, weftStream_t stream);
/* Point to point. A send matches the receive that peer posts for this rank in the
 * same order; inside weftGroupStart/End any mix of sends and receives is fused
 * so that their order across ranks cannot deadlock. */
weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream);
weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                      weftComm_t comm, weftStream_t stream);
/* A receive from whichever rank's send to this rank comes first (MPI's
 * MPI_ANY_SOURCE; weft's, NCCL has none), on host memory: *source is that
 * rank once the receive completes. The send must match count and datatype.
 * Not inside a group; needs WEFT_CHECK_CALLS=1 (the default). */
weftResult_t weftRecvAny(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                         weftComm_t comm);
/* Returns once every rank has entered the barrier. */
weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream);

/* Group calls, as in NCCL: calls between weftGroupStart and weftGroupEnd are
 * only recorded (and return weftSuccess); weftGroupEnd runs them, fusing the
 * sends and receives of each communicator and running different communicators
 * concurrently (so one thread may drive several ranks' communicators). Groups
 * nest; the outermost weftGroupEnd runs them. */
weftResult_t weftGroupStart(void);
weftResult_t weftGroupEnd(void);
/* The outermost weftGroupEnd, non-blocking: *request completes when every call
 * of the group did. */
weftResult_t weftGroupEndAsync(weftRequest_t* request);
/* Ends the outermost group without running it (NCCL's ncclGroupSimulateEnd):
 * *estimatedUs is the time the group's calls would take on this rank by the
 * communicators' cost model (collectives in sequence, point-to-point calls of
 * one communicator concurrently), in microseconds; the calls are dropped, so
 * the next call on each communicator pairs with the peers' next call. Local:
 * no rank needs to simulate the same group. */
weftResult_t weftGroupSimulateEnd(float* estimatedUs);

/* Collective over comm: ranks that pass the same color form a new communicator,
 * ordered by key, then by rank in comm. WEFT_SPLIT_NOCOLOR gives *newcomm = NULL. */
#define WEFT_SPLIT_NOCOLOR (-1)
weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                           void* config /* reserved, pass NULL */);

/* After a failure: the ranks not in excludeRanks (the dead ones) build a new
 * communicator of the survivors, ranked in their old order. Collective over
 * the survivors only; works on a broken communicator (it uses neither the
 * data channels nor any excluded rank). Every survivor must pass the same
 * set (order and duplicates do not matter), else weftInvalidUsage. A caller
 * that is itself excluded gets *newcomm = NULL at once. The old
 * communicator stays as it was: destroy or abort it. */
weftResult_t weftCommShrink(weftComm_t comm, const int* excludeRanks, int nExclude,
                            weftComm_t* newcomm);

/* A communicator of nranks ranks made of comm's ranks and ranks that join
 * them (standbys, new processes); with weftCommShrink, a replacement: a
 * standby takes a dead rank's place and every rank keeps its number. Ranks
 * of comm pass comm (rank -1 keeps their rank in comm; or the rank to take);
 * joining ranks pass comm = NULL and the rank they take. All pass the same
 * id: a fresh weftGetUniqueId made by one of comm's ranks, handed to the
 * joining ranks by the application or its launcher. Collective over comm's
 * ranks and the joining ones; comm stays as it was. Two participants taking
 * one rank, or comm's ranks disagreeing on nranks or id, fail every one. */
weftResult_t weftCommGrow(weftComm_t comm, int nranks, weftUniqueId id, int rank,
                          weftComm_t* newcomm);

/* ---- standby ranks (docs/api.md) ---------------------------------------- */
/* Processes started with a job that wait, idle, until a rank dies, then take
 * its place. A launcher serves the pool for the life of the job and gives
 * every process its address as WEFT_STANDBY_ADDR (weft-run --standby K does);
 * the address holds a random secret: treat it as a credential. */
typedef struct weftStandbyPool* weftStandbyPool_t;
/* Starts serving a pool; addr (len bytes) gets what WEFT_STANDBY_ADDR must say. */
weftResult_t weftStandbyPoolStart(weftStandbyPool_t* pool, char* addr, size_t len);
/* Stops it: standbys still waiting return from weftStandbyWait. */
weftResult_t weftStandbyPoolStop(weftStandbyPool_t pool);
/* From the launcher: process `pid` holds `rank` of the job's nranks; and a
 * process ended. The pool then answers survivors which ranks died
 * (weftCommReplace with deadRanks NULL); weft-run tells it both. */
weftResult_t weftStandbyPoolRankStarted(weftStandbyPool_t pool, int rank, int nranks, int64_t pid);
weftResult_t weftStandbyPoolProcessEnded(weftStandbyPool_t pool, int64_t pid);
/* From the launcher: process `pid` is a standby. Until it waits (or ends), a
 * survivors' weftCommReplace it could serve is held, up to 30 s, rather than
 * told that no standby waits. */
weftResult_t weftStandbyPoolStandbyStarted(weftStandbyPool_t pool, int64_t pid);
/* *standby = 1 when this process was started as a standby: by weft-run
 * --standby (WEFT_STANDBY=1), or as one of the launcher's last WEFT_STANDBYS
 * processes (srun, mpirun, ...); it then calls weftStandbyWait instead of
 * weftCommInitFromEnv. */
weftResult_t weftStandbyLaunched(int* standby);
/* In a standby: waits until the survivors of a failure call weftCommReplace,
 * then returns its communicator (*comm), in which this process has the rank
 * of a dead one. weftInvalidUsage when the job ended without needing it. */
weftResult_t weftStandbyWait(weftComm_t* comm);
/* After a failure, collective over the survivors (as weftCommShrink, on a
 * broken communicator too): shrinks comm without deadRanks, then, if the
 * pool has a standby for every dead rank, grows back to comm's size with
 * each standby in a dead rank's place, so that every rank keeps its number:
 * *replaced = the number of dead ranks. Else *newcomm is the shrunk
 * communicator (ranks renumbered as shrink does), *replaced = 0, and a WARN
 * says why. An excluded caller gets *newcomm = NULL. comm stays as it was.
 * deadRanks NULL with nDead 0: the pool says which ranks died, as its
 * launcher saw them end (weft-run does), for a communicator whose ranks are
 * the job's (made from the launcher's environment, or replaced from one);
 * every survivor asks, and all retry until they agree, within WEFT_TIMEOUT. */
weftResult_t weftCommReplace(weftComm_t comm, const int* deadRanks, int nDead, weftComm_t* newcomm,
                             int* replaced);

/* ---- replicas: in-memory copies of state, for recovery (docs/api.md) ------ */
/* A rank's buffer (model and optimizer state, say) with copies in other
 * ranks' host memory, committed in versions, so that after a failure every
 * rank, a standby in a dead rank's place included, resumes from the same
 * version without a checkpoint on disk. */
typedef struct weftReplica* weftReplica_t;
#define WEFT_REPLICA_MAX_COPIES 4
/* Local (no communication): protects `bytes` of host memory at `buffer` with
 * copies on `copies` other ranks (1..WEFT_REPLICA_MAX_COPIES, fewer than
 * comm's ranks), on other nodes where there are any. Every rank of comm
 * registers its own buffer (sizes may differ) with the same copies. Memory:
 * two versions of this rank's buffer and of each of the `copies` buffers it
 * holds for others, 2 x (1 + copies) x bytes, allocated at the first commit. */
weftResult_t weftReplicaRegister(weftComm_t comm, void* buffer, size_t bytes, int copies,
                                 weftReplica_t* replica);
/* Collective over the replica's communicator, non-blocking: copies the
 * buffer, as it is now, as the next version. Leave the buffer untouched until
 * *request completes. When it completes with weftSuccess on any rank, that
 * version is whole on every rank; a commit that fails is discarded on every
 * rank (a restore goes back to the previous version), and the replica takes
 * no commit until weftReplicaRestore. Not inside a group. */
weftResult_t weftReplicaCommit(weftReplica_t replica, weftRequest_t* request);
/* The newest version this rank saw complete (0: none yet). */
weftResult_t weftReplicaVersion(weftReplica_t replica, uint64_t* version);
/* Collective over comm (NULL: the replica's own communicator, to roll back
 * without a failure): sets every rank's buffer to the newest version whole
 * on every rank, *version. After weftCommReplace, survivors pass the new
 * communicator (the replica moves to it) and a standby passes the replica it
 * registered on it; a dead rank's buffer comes from a rank holding a copy,
 * and copies a dead rank held are made again. comm must have as many ranks
 * as the replica was registered on; if a rank's version was held only by
 * dead ranks, every rank fails with weftInvalidUsage naming it. */
weftResult_t weftReplicaRestore(weftReplica_t replica, weftComm_t comm, uint64_t* version);
/* Local: frees the replica's copies (no commit may be in flight). */
weftResult_t weftReplicaDeregister(weftReplica_t replica);

/* ---- host memory the ranks of a node can share -------------------------- */
/* Allocates size bytes of zeroed, page-aligned host memory (like MPI_Alloc_mem).
 * Any buffer works with every call; buffers from here are faster between ranks
 * of one node: peers map them, so large collectives move data with plain loads
 * and stores instead of cross-memory attach (see docs/performance.md). size 0
 * gives *ptr = NULL. A forked child does not inherit the memory. */
weftResult_t weftHostAlloc(void** ptr, size_t size);
/* Frees what weftHostAlloc returned (NULL is accepted); no call may be using it.
 * Peers that mapped it let go of it at their next call with this rank. */
weftResult_t weftHostFree(void* ptr);

/* ---- non-blocking forms on host memory ---------------------------------- */
/* Start the collective and return at once with a request; the buffers must
 * stay untouched until the request completes. Requests complete in call order
 * on a communicator. */
weftResult_t weftAllReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                                weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                weftRequest_t* request);
weftResult_t weftAllGatherAsync(const void* sendbuff, void* recvbuff, size_t sendcount,
                                weftDataType_t datatype, weftComm_t comm, weftRequest_t* request);
weftResult_t weftReduceScatterAsync(const void* sendbuff, void* recvbuff, size_t recvcount,
                                    weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                    weftRequest_t* request);
weftResult_t weftBroadcastAsync(const void* sendbuff, void* recvbuff, size_t count,
                                weftDataType_t datatype, int root, weftComm_t comm,
                                weftRequest_t* request);
weftResult_t weftReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                             weftDataType_t datatype, weftRedOp_t op, int root, weftComm_t comm,
                             weftRequest_t* request);
weftResult_t weftAllToAllAsync(const void* sendbuff, void* recvbuff, size_t count,
                               weftDataType_t datatype, weftComm_t comm, weftRequest_t* request);
weftResult_t weftSendAsync(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                           weftComm_t comm, weftRequest_t* request);
weftResult_t weftRecvAsync(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                           weftComm_t comm, weftRequest_t* request);
/* *source is set before the request completes. */
weftResult_t weftRecvAnyAsync(void* recvbuff, size_t count, weftDataType_t datatype, int* source,
                              weftComm_t comm, weftRequest_t* request);
weftResult_t weftBarrierAsync(weftComm_t comm, weftRequest_t* request);
/* *done = 1 when complete; then the request is freed and *request set to NULL,
 * and the return value is the collective's result. */
weftResult_t weftTest(weftRequest_t* request, int* done);
/* Blocks until complete (bounded by WEFT_TIMEOUT), frees the request, sets
 * *request to NULL and returns the collective's result. */
weftResult_t weftWait(weftRequest_t* request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_WEFT_H */
