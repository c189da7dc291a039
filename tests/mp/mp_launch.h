// How mp_collectives joins its job: from the environment weft-run sets
// (weftCommInitFromEnv), or, in builds with MPI, through MPI (rank 0 creates
// the unique id and broadcasts it; every rank calls weftCommInitRank).
#pragma once

#include <weft/weft.h>

#include <string>

namespace mp {

// Initialises the communicator; false with a sentence in *why on failure.
bool launchInit(bool useMpi, int* argc, char*** argv, weftComm_t* comm, std::string* why);
// Ends the job's launcher side (MPI_Finalize when MPI was used).
void launchFinalize(bool useMpi);
// True when this build can run under mpirun.
bool launchHasMpi();

}  // namespace mp
