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
// Emulates nodes before init: sets WEFT_HOSTID from a layout such as "2,2,1"
// (ranks 0-1 on one node, 2-3 on a second, 4 on a third), from the rank the
// launcher gives (WEFT_RANK, OMPI_COMM_WORLD_RANK, PMI_RANK); false with a
// message naming `program` on error.
bool applyLayout(const std::string& layout, const char* program);

}  // namespace mp
