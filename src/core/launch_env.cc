// Launch detection from the environment (see launch_env.h).
#include "core/launch_env.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "bootstrap/peer_user.h"
#include "bootstrap/root.h"

namespace weft {
namespace {

bool parseInt(const char* text, int* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < INT32_MIN || v > INT32_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

weftResult_t readRankSize(const char* rankVar, const char* sizeVar, LaunchEnv* env) {
  // Non-WEFT names (torchrun's) are read directly; WEFT_ ones go through the table.
  std::string rankText = std::strncmp(rankVar, "WEFT_", 5) == 0
                             ? configString(rankVar)
                             : (std::getenv(rankVar) ? std::getenv(rankVar) : "");
  std::string sizeText = std::strncmp(sizeVar, "WEFT_", 5) == 0
                             ? configString(sizeVar)
                             : (std::getenv(sizeVar) ? std::getenv(sizeVar) : "");
  if (!parseInt(sizeText.c_str(), &env->worldSize) || env->worldSize < 1 ||
      env->worldSize > kMaxRanks)
    return setError(weftInvalidArgument,
                    "weftCommInitFromEnv: %s='%s' is not a valid number of ranks", sizeVar,
                    sizeText.c_str());
  if (!parseInt(rankText.c_str(), &env->rank) || env->rank < 0 || env->rank >= env->worldSize)
    return setError(weftInvalidArgument, "weftCommInitFromEnv: %s='%s' is not a rank in [0, %d)",
                    rankVar, rankText.c_str(), env->worldSize);
  return weftSuccess;
}

// True when the host of "host:port" or "[v6]:port" is a numeric address.
bool numericHost(const std::string& hostPort) {
  std::string host = hostPort.substr(0, hostPort.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The rank and size the launch names (the cases of launch_env.h).
weftResult_t readLauncherRankSize(LaunchEnv* env) {
  if (configIsSet("WEFT_UNIQUE_ID")) {
    env->haveId = true;
    env->idHex = configString("WEFT_UNIQUE_ID");
    env->source = "WEFT_UNIQUE_ID";
    return readRankSize("WEFT_RANK", "WEFT_WORLD_SIZE", env);
  }
  if (configIsSet("WEFT_ROOT_ADDR")) {
    env->rootAddr = configString("WEFT_ROOT_ADDR");
    env->source = "WEFT_ROOT_ADDR";
    if (configIsSet("WEFT_RANK") || configIsSet("WEFT_WORLD_SIZE"))
      return readRankSize("WEFT_RANK", "WEFT_WORLD_SIZE", env);
    // The launcher's own rank and size, where it set both (checked in this
    // order: a job step under mpirun inside a Slurm allocation has both, and
    // mpirun's describe the job).
    static const char* const kLaunchers[][3] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"},
        {"PMI_RANK", "PMI_SIZE", "an MPICH/Hydra launcher"},
        {"SLURM_PROCID", "SLURM_NTASKS", "Slurm's srun"},
    };
    for (const auto& l : kLaunchers) {
      if (std::getenv(l[0]) == nullptr || std::getenv(l[1]) == nullptr) continue;
      env->source = std::string("WEFT_ROOT_ADDR with ") + l[2] + " (" + l[0] + "/" + l[1] + ")";
      return readRankSize(l[0], l[1], env);
    }
    return setError(weftInvalidArgument,
                    "weftCommInitFromEnv: WEFT_ROOT_ADDR is set but no rank and size: set "
                    "WEFT_RANK and WEFT_WORLD_SIZE, or start the ranks with mpirun or srun");
  }
  const char* maddr = std::getenv("MASTER_ADDR");
  const char* mport = std::getenv("MASTER_PORT");
  if (maddr && mport && std::getenv("RANK") && std::getenv("WORLD_SIZE")) {
    int port = 0;
    if (!parseInt(mport, &port) || port <= 0 || port >= 65535)
      return setError(weftInvalidArgument,
                      "weftCommInitFromEnv: MASTER_PORT='%s' is not a port below 65535", mport);
    std::string host = maddr;
    if (host.find(':') != std::string::npos && host[0] != '[') host = "[" + host + "]";
    env->rootAddr = host + ":" + std::to_string(port + 1);
    env->source = "torchrun (MASTER_ADDR/MASTER_PORT+1/RANK/WORLD_SIZE)";
    return readRankSize("RANK", "WORLD_SIZE", env);
  }
  return setError(
      weftInvalidArgument,
      "weftCommInitFromEnv: no launch found in the environment: set WEFT_UNIQUE_ID (weft-run), "
      "WEFT_ROOT_ADDR, or MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE, each with a rank and size");
}

// The launcher's last WEFT_STANDBYS processes are standbys (not with
// weft-run, whose standbys say WEFT_STANDBY=1 and hold no rank).
weftResult_t splitStandbys(LaunchEnv* env) {
  int64_t standbys = 0;
  WEFT_CHECK(configSize("WEFT_STANDBYS", &standbys));
  if (standbys == 0) return weftSuccess;
  if (env->haveId)
    return setError(weftInvalidArgument,
                    "weftCommInitFromEnv: WEFT_STANDBYS is for launchers other than weft-run "
                    "(weft-run --standby K starts its own standbys)");
  const int k = static_cast<int>(standbys);
  if (k >= env->worldSize)
    return setError(weftInvalidArgument,
                    "weftCommInitFromEnv: WEFT_STANDBYS=%d leaves no rank of the launcher's %d "
                    "processes (%s)",
                    k, env->worldSize, env->source.c_str());
  env->worldSize -= k;
  env->standby = env->rank >= env->worldSize;
  return weftSuccess;
}

}  // namespace

weftResult_t readLaunchEnv(LaunchEnv* env) {
  WEFT_CHECK(readLauncherRankSize(env));
  return splitStandbys(env);
}

weftResult_t launchedAsStandby(bool* standby) {
  *standby = false;
  bool flagged = false;
  WEFT_CHECK(configSwitch("WEFT_STANDBY", &flagged));
  if (flagged) {
    *standby = true;
    return weftSuccess;
  }
  int64_t standbys = 0;
  WEFT_CHECK(configSize("WEFT_STANDBYS", &standbys));
  if (standbys == 0) return weftSuccess;
  LaunchEnv env;
  WEFT_CHECK(readLaunchEnv(&env));
  *standby = env.standby;
  return weftSuccess;
}

weftResult_t uniqueIdForLaunch(const LaunchEnv& env, UniqueIdBody* body) {
  if (env.haveId) {
    weftUniqueId id;
    if (weftUniqueIdFromString(env.idHex.c_str(), &id) != weftSuccess)
      return setError(weftInvalidArgument, "weftCommInitFromEnv: WEFT_UNIQUE_ID is malformed: %s",
                      lastError().c_str());
    std::string why;
    if (!unpackUniqueId(id.internal, body, &why))
      return setError(weftInvalidArgument, "weftCommInitFromEnv: WEFT_UNIQUE_ID is invalid: %s",
                      why.c_str());
    return weftSuccess;
  }
  SockAddr root;
  std::string why;
  if (!parseHostPort(env.rootAddr, &root, &why))
    return setError(weftInvalidArgument, "weftCommInitFromEnv: root address from %s: %s",
                    env.source.c_str(), why.c_str());
  std::memset(body, 0, sizeof(*body));
  body->magic = kWireMagic;
  body->version = kWireVersion;
  body->root = toWire(root);
  // Expand the secret text (or the job's identity) into kSecretBytes. A
  // secret derived from the address and size is known to anyone who knows
  // those: such a job runs only on loopback and only for this user.
  std::string seed = configString("WEFT_SECRET");
  if (seed.empty()) {
    if (!isLoopback(root))
      return setError(
          weftInvalidArgument,
          "weftCommInitFromEnv: the rendezvous %s (from %s) can be reached from the network "
          "and WEFT_SECRET is not set, so anyone who knows the address and the number of ranks "
          "could join this job: set WEFT_SECRET to the same random string on every rank (e.g. "
          "export WEFT_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n') before torchrun, "
          "srun or mpirun -x WEFT_SECRET), or start the job with weft-run (docs/launching.md)",
          env.rootAddr.c_str(), env.source.c_str());
    body->flags |= kIdSameUserOnly;
    seed = "weft-job:" + env.rootAddr + ":" + std::to_string(env.worldSize);
  }
  for (size_t i = 0; i < kSecretBytes; i += 8) {
    std::string block = seed + "#" + std::to_string(i);
    uint64_t h = fnv1a(block.data(), block.size());
    std::memcpy(body->secret + i, &h, 8);
  }
  if (env.rank == 0) {
    // Serve the rendezvous on the address given as a number. A name may mean
    // another address here than on the other hosts (Debian maps the host's
    // own name to 127.0.1.1), so a name gets every local address, as does a
    // number that is not one of this host's (behind NAT, say).
    SockAddr bound;
    const bool sameUser = (body->flags & kIdSameUserOnly) != 0;
    const bool numeric = numericHost(env.rootAddr);
    weftResult_t r = weftInvalidArgument;
    if (numeric) r = RootServer::start(root, body->secret, sameUser, &bound);
    if (r != weftSuccess && !(numeric && isLoopback(root))) {
      if (numeric)
        WEFT_WARN(BOOTSTRAP,
                  "rank 0 cannot listen on %s (%s): serving the rendezvous on every "
                  "address of this host instead",
                  root.str().c_str(), lastError().c_str());
      SockAddr any;
      any.ss.ss_family = static_cast<sa_family_t>(root.family());
      any.len = root.len;
      any.setPort(root.port());
      r = RootServer::start(any, body->secret, sameUser, &bound);
    }
    if (r != weftSuccess)
      return setError(r, "weftCommInitFromEnv: rank 0 cannot serve the rendezvous at %s: %s",
                      env.rootAddr.c_str(), lastError().c_str());
  }
  WEFT_INFO(BOOTSTRAP, "launch from %s: rank %d of %d, root %s", env.source.c_str(), env.rank,
            env.worldSize, root.str().c_str());
  return weftSuccess;
}

}  // namespace weft
