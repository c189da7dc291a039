// How weftCommInitFromEnv finds its job, in this order:
//  1. WEFT_UNIQUE_ID (hex, from weft-run) + WEFT_RANK + WEFT_WORLD_SIZE;
//  2. WEFT_ROOT_ADDR=host:port + WEFT_RANK + WEFT_WORLD_SIZE (rank 0 serves the root there);
//     without WEFT_RANK/WEFT_WORLD_SIZE, the rank and size a launcher set:
//     Open MPI's mpirun (OMPI_COMM_WORLD_RANK/SIZE), Slurm's srun
//     (SLURM_PROCID/SLURM_NTASKS), MPICH/Hydra (PMI_RANK/PMI_SIZE), so that
//     `WEFT_ROOT_ADDR=... srun ./app` needs no MPI in the program;
//  3. torchrun's MASTER_ADDR + MASTER_PORT + RANK + WORLD_SIZE (the same, on the
//     torchrun port + 1 so that torch's own store on MASTER_PORT keeps its port).
// In cases 2 and 3 there is no unique id to carry a random secret, so the
// secret is derived from WEFT_SECRET when set (set it on shared networks) and
// otherwise from the job's addresses, which only guards against accidents.
// Standbys: weft-run starts them with WEFT_STANDBY=1 and no rank; with other
// launchers WEFT_STANDBYS=K makes the launcher's last K processes standbys,
// and the job's size the launcher's minus K.
#pragma once

#include <string>

#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

namespace weft {

struct LaunchEnv {
  int rank = -1;
  int worldSize = 0;
  bool haveId = false;
  std::string idHex;     // case 1
  std::string rootAddr;  // cases 2 and 3: "host:port"
  std::string source;    // which variables were used, for messages
  bool standby = false;  // this process is a standby (it has no rank in the job)
};

weftResult_t readLaunchEnv(LaunchEnv* env);
// Whether this process was launched as a standby, without reading the rest.
weftResult_t launchedAsStandby(bool* standby);
// The unique id for this launch; in cases 2 and 3 rank 0 also starts the root server.
weftResult_t uniqueIdForLaunch(const LaunchEnv& env, UniqueIdBody* body);

}  // namespace weft
