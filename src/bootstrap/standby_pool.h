// Standby processes and the pool that hands them out (weftStandbyPool*,
// weftStandbyWait, weftCommReplace). A launcher serves the pool for the life
// of a job; its address, with a random secret, reaches every process as
// WEFT_STANDBY_ADDR ("host:port/<64 hex digits>"). A standby connects, says
// it waits, and blocks on the connection: idle, costing a socket. Survivors
// of a failure ask the pool for one standby per dead rank, all or none: each
// chosen standby gets the rank it takes, the size and the unique id of the
// communicator to join, and the pool answers the survivors how it went. When
// the pool stops, waiting standbys read the end of their connection: the job
// ended without them. The pool also learns which process holds which rank
// and when a process ends, so that survivors can ask it which ranks died and
// all get the same answer: each rank's process keeps a connection to it (its
// lifeline: a standby's wait connection becomes one when it takes a rank),
// whose end is that process's end, whatever launched it; weft-run also tells
// it from the processes it starts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "weft/weft.h"

namespace weft {

constexpr uint32_t kStandbyMagic = 0x57534259;  // "WSBY"
constexpr int kStandbyMaxAssign = 64;           // ranks replaced by one request
constexpr double kStandbyRequestSec = 2.0;      // to read a request or send an answer
// How long the pool holds the survivors' request while standbys that were
// started have not yet come to wait, and the most a lifeline may announce.
constexpr double kStandbyStartSec = 30.0;
constexpr int kStandbyMaxAnnounced = 1 << 20;

// Client -> pool: wait (a standby, with its pid), assign standbys to `ranks`
// (survivors), ask which ranks died (survivors), or hold rank ranks[0] of
// `nranks` until this connection ends (a lifeline, whose `count` says how
// many standbys the launcher starts, where the rank knows: WEFT_STANDBYS).
enum StandbyKind : uint32_t {
  kStandbyWait = 1,
  kStandbyAssign = 2,
  kStandbyDead = 3,
  kStandbyLife = 4
};
struct StandbyRequest {
  uint32_t magic;
  uint32_t kind;  // StandbyKind
  uint8_t secret[kSecretBytes];
  int32_t nranks;
  int32_t count;
  int32_t ranks[kStandbyMaxAssign];
  char id[WEFT_UNIQUE_ID_BYTES];
  int64_t pid;
};

// Pool -> client: to a standby, its place; to survivors, whether it went, or
// the ranks that died (`count` of `ranks`, of a job of `nranks`).
struct StandbyAnswer {
  int32_t status;  // 0: done; else `text` says why not
  int32_t rank;
  int32_t nranks;
  int32_t count;
  int32_t ranks[kStandbyMaxAssign];
  char id[WEFT_UNIQUE_ID_BYTES];
  char text[200];
};

class StandbyPool {
 public:
  // Listens on this host's interface (WEFT_SOCKET_IFNAME) and serves from a
  // thread of its own; `addr` gets what WEFT_STANDBY_ADDR must say.
  static weftResult_t start(std::unique_ptr<StandbyPool>* pool, std::string* addr);
  ~StandbyPool();  // stops: waiting standbys see their connection end
  // From the launcher: `pid` holds `rank` of the job's `nranks`; a process
  // ended. The ranks whose process ended, and that no standby took since,
  // are the dead ones a survivor asks for.
  void rankStarted(int rank, int nranks, int64_t pid);
  void processEnded(int64_t pid);
  // From the launcher: `pid` is a standby. Until it waits (or ends), a
  // survivors' request it could serve is held, up to kStandbyStartSec.
  void standbyStarted(int64_t pid);
  StandbyPool(const StandbyPool&) = delete;
  StandbyPool& operator=(const StandbyPool&) = delete;

  struct State;  // standby_pool.cc

 private:
  StandbyPool() = default;
  std::shared_ptr<State> state_;
};

// Survivors: the ranks the launcher saw die (and not yet replaced), ascending,
// and the job's size.
weftResult_t standbyDeadRanks(const std::string& addr, std::vector<int>* dead, int* nranks);
// A standby: waits until the pool hands it a place (status 0) or stops
// (weftInvalidUsage, "the job ended without needing this standby"). Its
// connection then stays open as the process's lifeline for that rank.
weftResult_t standbyWait(const std::string& addr, StandbyAnswer* place);
// A rank's process: opens its lifeline for `rank` of `nranks` (once per
// process; later calls, as the communicators it makes after a failure,
// keep the first), announcing the job's `standbys` (0: unknown).
weftResult_t standbyLifeline(const std::string& addr, int rank, int nranks, int standbys);
// Survivors: one standby for each of `ranks` of an `nranks` communicator
// joining with `id`, all or none; *assigned false (with `why`) when fewer wait
// (or are starting: then the answer comes when they wait, or in kStandbyStartSec).
weftResult_t standbyAssign(const std::string& addr, int nranks, const std::vector<int>& ranks,
                           const weftUniqueId& id, bool* assigned, std::string* why);

}  // namespace weft
