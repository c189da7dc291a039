// The one table of WEFT_* knobs: name, default, meaning, and for typed knobs
// (sizes, 0/1 switches, choices among words) their type, range or words. Add a line here for every
// new knob; nothing else in weft may call getenv() on a WEFT_ name. A knob that ranks must set
// alike (it shapes the wire, a transport or the algorithm) also goes in
// jobWideVars() below, which init checks (core/config_agree.h).
#include "base/config.h"

#include <cstdint>
#include <iterator>

namespace weft {

namespace {

constexpr int64_t kMiB = 1LL << 20, kGiB = 1LL << 30, kNoLimit = INT64_MAX;

// Constant-initialized (no constructor or destructor runs), so detached
// threads (the rendezvous root) may read it during exit.
const ConfigVar kConfigVars[] = {
    {"WEFT_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE.", ConfigType::kChoice, 0, 0,
     "NONE|WARN|INFO|TRACE"},
    {"WEFT_DEBUG_SUBSYS", "ALL",
     "Comma list of subsystems to log: INIT, BOOTSTRAP, NET, COLL, TUNING, ALL."},
    {"WEFT_DEBUG_FILE", "", "Write the log here instead of stderr (%h host, %p pid)."},
    {"WEFT_TIMEOUT", "300",
     "Seconds any blocking wait (bootstrap, connect, collective) may last; time in which "
     "the process was frozen (VM paused, SIGSTOP, suspend) does not count.",
     ConfigType::kSeconds},
    {"WEFT_SOCKET_IFNAME", "",
     "Interfaces for sockets: prefixes, '=' exact, '^' excludes (NCCL syntax)."},
    {"WEFT_SOCKET_FAMILY", "", "Force AF_INET or AF_INET6 for sockets (unset: either).",
     ConfigType::kChoice, 0, 0, "AF_INET|AF_INET6"},
    {"WEFT_SOCKET_NSTREAMS", "1",
     "TCP streams per peer pair (each one connection per direction, or one in all); chunks "
     "are striped over them (more help on high-latency links).",
     ConfigType::kSize, 1, 16, "1 to 16"},
    {"WEFT_SOCKET_PER_DIRECTION", "64K",
     "Smallest collective (bytes per rank) whose data goes over TCP on connections of its own "
     "per direction (WEFT_SOCKET_LANES each; opened with a peer on the first such call that "
     "moves data with it), so a rank's sends never delay its receives; smaller calls, "
     "point-to-point calls and call headers share one more connection, where "
     "replies carry the ACKs. 0: the shared connection only.",
     ConfigType::kSize, 0, kNoLimit, "0 (off) or a size"},
    {"WEFT_SOCKET_LANES", "2",
     "Connections each direction's large-call data is spread over, per stream, in 128 KiB "
     "pieces: the kernel moves the pieces side by side (1 to 16; 1 is one connection).",
     ConfigType::kSize, 1, 16, "1 to 16"},
    {"WEFT_RUNTIME_CONNECT", "1",
     "1: a rank opens its shared TCP connection to a peer at their first "
     "exchange, so it holds connections only to the peers it talks to; 0: to every peer at "
     "init (peers over shared memory or verbs are connected at init either way: those "
     "transports watch a peer's death on it).",
     ConfigType::kSwitch},
    {"WEFT_SOCKET_SPLICE", "64K",
     "Smallest TCP send passed by reference (vmsplice+splice, no send-side copy) where the "
     "schedule keeps the bytes unchanged until the peer read them; 0 turns it off.",
     ConfigType::kSize, 0, kGiB, "0 (off) or a size up to 1G"},
    {"WEFT_SOCKET_SPLICE_MAX", "512K",
     "Largest call sent by reference: above it the peer reads the sender's pages from "
     "further out in the memory hierarchy, which costs more than the copy saved.",
     ConfigType::kSize, 0, kNoLimit, "a size"},
    {"WEFT_SOCKET_CONGESTION", "auto",
     "TCP congestion control of the data connections: auto (Reno on connections that stay "
     "inside one host, where pacing and delay-based slow-start exits only cost; between hosts "
     "the system's, but CUBIC, else Reno, in place of BBR, whose probing overfills shallow "
     "switch queues when a collective's flows start together), system (always the system's), "
     "or an algorithm name such as cubic."},
    {"WEFT_CHUNK", "512K",
     "Bytes per pipelined chunk (K/M suffixes); unset, the tuner picks up to this much.",
     ConfigType::kSize, 64, 64 * kMiB, "a size from 64 to 64M"},
    {"WEFT_ALGO", "auto",
     "Force an algorithm: auto (the tuner), ring (pipelined ring/chain), oneshot (one round), "
     "tree (double binary tree allreduce), hier (inside nodes, then across; all-to-all through "
     "the node, then between equal local indices), hier-leaf "
     "(allreduce inside nodes, then rings inside each WEFT_FABRIC leaf and across leaves, where "
     "leaves hold equally many nodes; across leaves as rings inside each pod and across pods, "
     "where pods hold equally many leaves), rd (recursive doubling allreduce, across nodes after "
     "the node's reduce-scatter where every node has the same ranks), rhd (recursive "
     "halving-doubling allreduce) or gpu-ring (calls on a CUDA stream on the GPU ring only). "
     "Calls on a CUDA stream take the GPU ring under auto, ring and gpu-ring; any other value "
     "stages them through host memory with that algorithm.",
     ConfigType::kChoice, 0, 0, "auto|ring|oneshot|tree|hier|hier-leaf|rd|rhd|gpu-ring"},
    {"WEFT_TUNE_NET", "",
     "Declare the link between nodes for the tuner as 'LATENCY_US,GBPS' (e.g. 200,0.125); "
     "unset, it is measured at init."},
    {"WEFT_TUNE_SHM", "",
     "Declare the link inside a node for the tuner as 'LATENCY_US,GBPS'; unset, measured at "
     "init."},
    {"WEFT_ONESHOT_MAX", "64K",
     "Largest per-rank message that uses the one-round (oneshot) algorithm; on one node "
     "without shared memory, allreduce and allgather also only while (n-1) x the message is "
     "at most 96 and 128 KiB.",
     ConfigType::kSize, 0, kGiB, "a size up to 1G"},
    {"WEFT_REDUCE_ISA", "auto",
     "Host reduction kernels: auto (widest the CPU runs), avx512, avx2 or scalar.",
     ConfigType::kChoice, 0, 0, "auto|avx512|avx2|scalar"},
    {"WEFT_SPIN_US", "auto",
     "Microseconds a waiter spins before it yields (WEFT_YIELD_US more), then sleeps in "
     "poll(); auto: 2, or 0 where a node's ranks outnumber the CPUs they may run on.",
     ConfigType::kSizeOrAuto, 0, 1000000, "0 to 1000000 (microseconds)"},
    {"WEFT_YIELD_US", "150",
     "Microseconds a waiter yields its core after spinning, before it sleeps in poll() (a "
     "sleep costs a wake-up; a yield lets a rank sharing the core run).",
     ConfigType::kSize, 0, 1000000, "0 to 1000000 (microseconds)"},
    {"WEFT_UNIQUE_ID", "", "Hex unique id for weftCommInitFromEnv (set by weft-run)."},
    {"WEFT_RANK", "", "This process's rank for weftCommInitFromEnv."},
    {"WEFT_WORLD_SIZE", "", "Number of ranks for weftCommInitFromEnv."},
    {"WEFT_ROOT_ADDR", "", "host:port where rank 0 serves the rendezvous (no unique id needed)."},
    {"WEFT_HOSTID", "",
     "Node identity override (default: hostname + boot id + network and PID namespaces)."},
    {"WEFT_CHECK_CALLS", "1",
     "1: each collective carries a 24-byte header, so ranks that disagree on the collective, "
     "count, datatype, op or root fail with weftInvalidUsage, and each weftSend a 24-byte "
     "one that its weftRecv checks (count, datatype); 0 (on every rank) saves their cost.",
     ConfigType::kSwitch},
    {"WEFT_CHECK_RADIX", "8",
     "Collectives on up to this many ranks send their call header to every peer; on more, "
     "the check takes ceil(log_R n) steps of R - 1 messages per rank (docs/api.md, "
     "collective mismatch), so a call costs and connects O(R log n), not n.",
     ConfigType::kSize, 2, 1 << 20, "2 to 1M"},
    {"WEFT_CHECK_THREADS", "1",
     "1: collective headers also carry how many times the calling thread changed, so threads "
     "that take turns on a communicator in a different order on different ranks fail with "
     "weftInvalidUsage; 0 (on every rank) for programs whose calls come from a pool of "
     "threads in an order that every rank shares.",
     ConfigType::kSwitch},
    {"WEFT_SHM_DISABLE", "0",
     "1: ranks on one node talk over the network transports, not shared memory.",
     ConfigType::kSwitch},
    {"WEFT_SHM_MAP", "1",
     "1: large calls between ranks of a node move data through 1 MiB outboxes and "
     "weftHostAlloc buffers that peers map; 0: peers read private memory with cross-memory "
     "attach only.",
     ConfigType::kSwitch},
    {"WEFT_SHM_FIFO", "2M",
     "Bytes of shared-memory FIFO per peer pair and stream (K/M suffixes); left unset, nodes "
     "of over 32 ranks get less (down to 64K) so that the node's FIFOs stay within 2 GiB.",
     ConfigType::kSize, 4096, kGiB, "a size from 4K to 1G"},
    {"WEFT_SECRET", "", "Shared job secret for WEFT_ROOT_ADDR / torchrun launches."},
    {"WEFT_STANDBY", "0",
     "1 in a standby process weft-run --standby started (it has no rank until "
     "weftStandbyWait gives it one; weftStandbyLaunched says so).",
     ConfigType::kSwitch},
    {"WEFT_STANDBYS", "0",
     "Launches without weft-run (srun, mpirun, a launcher's RANK/WORLD_SIZE): the launcher's "
     "last K processes are standbys, and the job's ranks are the others (same on every "
     "process; WEFT_STANDBY_ADDR names the pool, e.g. one weft-pool serves).",
     ConfigType::kSize, 0, 4096, "0 to 4096"},
    {"WEFT_STANDBY_ADDR", "",
     "The standby pool's host:port/secret (set by weft-run --standby K; printed by weft-pool; "
     "or from a launcher that serves a pool with weftStandbyPoolStart): where weftStandbyWait "
     "and weftCommReplace ask, and where each rank's process keeps its lifeline."},
    {"WEFT_NET_GDR_LEVEL", "PXB",
     "Farthest GPU-NIC path class that still uses GPUDirect RDMA: PIX, PXB, PHB, NODE, PKG or "
     "SYS (or 1-6).",
     ConfigType::kChoice, 0, 0, "PIX|PXB|PHB|NODE|PKG|SYS|1|2|3|4|5|6"},
    {"WEFT_IB_HCA", "",
     "RDMA NICs to use: prefixes, '=' exact, '^' excludes, ':port' (NCCL_IB_HCA syntax)."},
    {"WEFT_IB_DISABLE", "0", "1: never use verbs (InfiniBand/RoCE); peers off the node use TCP.",
     ConfigType::kSwitch},
    {"WEFT_IB_GID_INDEX", "-1",
     "RoCE GID table index to use; -1 picks a non-link-local RoCE v2 GID (IPv4-mapped first).",
     ConfigType::kSize, -1, 255, "-1 (pick) or 0 to 255"},
    {"WEFT_IB_TC", "0", "Traffic class of RoCE packets (GRH).", ConfigType::kSize, 0, 255,
     "0 to 255"},
    {"WEFT_IB_SL", "0", "InfiniBand service level.", ConfigType::kSize, 0, 15, "0 to 15"},
    {"WEFT_IB_TIMEOUT", "14",
     "Verbs ACK timeout exponent: 4.096 us x 2^value per try (as NCCL_IB_TIMEOUT).",
     ConfigType::kSize, 1, 31, "1 to 31"},
    {"WEFT_IB_RETRY_CNT", "7", "Verbs transport retries before a send fails.", ConfigType::kSize, 0,
     7, "0 to 7"},
    {"WEFT_IB_BUFFER", "4M",
     "Bytes of verbs receive ring per queue pair (K/M suffixes), and as much staging; left "
     "unset, it is halved (down to 256K) until a rank's rings and staging for n - 1 peers fit "
     "in 512 MiB (4M up to 65 ranks at one queue pair per peer, 512K at 512).",
     ConfigType::kSize, 65536, kGiB, "a size from 64K to 1G"},
    {"WEFT_IB_QPS_PER_CONNECTION", "1",
     "Verbs queue pairs per peer and stream (1 to 16); the stream is striped over them in "
     "128K pieces (as NCCL_IB_QPS_PER_CONNECTION).",
     ConfigType::kSize, 1, 16, "1 to 16"},
    {"WEFT_IB_ZCOPY_THRESHOLD", "0",
     "Verbs sends of this many bytes or more (per QP piece) go zero-copy: RDMA-written from the "
     "registered user buffer into the receiver's; 0 = off (see docs/rdma.md for the caveat).",
     ConfigType::kSize, 0, kGiB, "0 (off) or a size up to 1G"},
    {"WEFT_IB_REG_CACHE", "1G",
     "Most bytes of user buffers kept registered for zero-copy; least recently used beyond "
     "that are deregistered.",
     ConfigType::kSize, 0, kNoLimit, "a size"},
    {"WEFT_IB_REG_PERSIST", "0",
     "1: keep zero-copy registrations of user buffers across calls (only if no buffer is freed "
     "while the communicator lives); 0: drop them at the end of each call.",
     ConfigType::kSwitch},
    {"WEFT_IB_RDMACM", "0",
     "1: connect verbs queue pairs through librdmacm (rdma_cm) instead of exchanging QP "
     "numbers through the bootstrap; needs an IP address on the port's netdev (RoCE) or IPoIB "
     "interface.",
     ConfigType::kSwitch},
    {"WEFT_GPU_RING", "1",
     "1: allreduce, reduce-scatter, reduce (sum, prod, max, min), allgather and broadcast on a "
     "CUDA stream run weft's ring kernel (peer GPU memory within a node, a host proxy between "
     "nodes); 0: stage through host memory; shared: as 1, and also between processes that "
     "share a GPU, whose kernels take turns on it unless MPS runs them together (for MPS, "
     "and to test CUDA IPC on one GPU).",
     ConfigType::kChoice, 0, 0, "0|1|shared"},
    {"WEFT_MAX_CTAS", "8",
     "Most thread blocks (CTAs) weft's ring kernel uses per call (1 to 32); the rest of the GPU "
     "stays free for compute kernels.",
     ConfigType::kSize, 1, 32, "1 to 32"},
    {"WEFT_NTHREADS", "512",
     "Threads per CTA of weft's ring kernel: 64, 128, 256 or 512 (as NCCL_NTHREADS); fewer "
     "leave more of each SM's registers and warp slots to compute kernels beside it.",
     ConfigType::kChoice, 0, 0, "64|128|256|512"},
    {"WEFT_RANK_GPU", "",
     "PCI bus id (or cudaN/nvmlN name) of the GPU this rank drives: its verbs device is that "
     "GPU's nearest NIC. Unset: a device near the rank's CPUs."},
    {"WEFT_BIND_PROGRESS", "1",
     "1: run the progress thread on the CPUs near this rank's NIC or GPU (within the "
     "process's affinity); 0: leave it where the OS puts it.",
     ConfigType::kSwitch},
    {"WEFT_TOPO_FILE", "",
     "Read the machine from this hwloc XML or NCCL/RCCL topology file instead of discovering "
     "it."},
    {"WEFT_FABRIC", "",
     "JSON description of the network above the nodes (leaves, pods, uplink rates; "
     "docs/scale.md): rings and trees then cross the fewest oversubscribed links."},
    {"WEFT_FABRIC_NODE", "",
     "This node's name in WEFT_FABRIC. Unset: its host name or its rank's listening address."},
};

}  // namespace

const std::vector<ConfigVar>& configVars() {
  // Never freed, for the same reason.
  static const std::vector<ConfigVar>& vars =
      *new std::vector<ConfigVar>(std::begin(kConfigVars), std::end(kConfigVars));
  return vars;
}

const std::vector<JobWideVar>& jobWideVars() {
  // They choose the wire protocol, a transport, a buffer layout both ends
  // share, or an algorithm: a rank that differs hangs, or computes wrong
  // results (WEFT_CHECK_CALLS=0 on one rank did). Checked at init.
  static const std::vector<JobWideVar>& vars = *new std::vector<JobWideVar>{
      {"WEFT_SOCKET_NSTREAMS", false},
      {"WEFT_SOCKET_PER_DIRECTION", false},
      {"WEFT_SOCKET_LANES", false},
      {"WEFT_RUNTIME_CONNECT", false},
      {"WEFT_CHUNK", true},  // set or unset matters: unset, the tuner picks
      {"WEFT_ALGO", false},
      {"WEFT_TUNE_NET", false},
      {"WEFT_TUNE_SHM", false},
      {"WEFT_ONESHOT_MAX", false},
      {"WEFT_CHECK_CALLS", false},
      {"WEFT_CHECK_THREADS", false},
      {"WEFT_CHECK_RADIX", false},
      {"WEFT_SHM_DISABLE", false},
      {"WEFT_SHM_MAP", false},
      {"WEFT_SHM_FIFO", true},  // unset, it is fitted to the node
      {"WEFT_IB_DISABLE", false},
      {"WEFT_IB_BUFFER", true},  // unset, it is fitted to the job
      {"WEFT_IB_QPS_PER_CONNECTION", false},
      {"WEFT_IB_ZCOPY_THRESHOLD", false},
      {"WEFT_IB_RDMACM", false},
      {"WEFT_GPU_RING", false},
      {"WEFT_MAX_CTAS", false},
  };
  return vars;
}

}  // namespace weft
