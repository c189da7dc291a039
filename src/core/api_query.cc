// Communicator query entry points of the C ABI: size, rank, the error that
// broke a communicator in the background, and the SMs its GPU ring takes.
#include <cstdint>
#include <mutex>

#include "base/error.h"
#include "collectives/reduce.h"
#include "core/call.h"
#include "core/comm.h"
#include "device/device_ring.h"

using namespace weft;

extern "C" weftResult_t weftCommCount(const weftComm_t comm, int* count) {
  clearError();
  WEFT_CHECK(checkComm(comm, "weftCommCount"));
  if (count == nullptr) return setError(weftInvalidArgument, "weftCommCount: count is NULL");
  *count = comm->nranks;
  return weftSuccess;
}

extern "C" weftResult_t weftCommUserRank(const weftComm_t comm, int* rank) {
  clearError();
  WEFT_CHECK(checkComm(comm, "weftCommUserRank"));
  if (rank == nullptr) return setError(weftInvalidArgument, "weftCommUserRank: rank is NULL");
  *rank = comm->rank;
  return weftSuccess;
}

extern "C" weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError) {
  clearError();
  if (comm == nullptr) return setError(weftInvalidArgument, "weftCommGetAsyncError: comm is NULL");
  if (!isLiveComm(comm))
    return setError(weftInvalidArgument, "weftCommGetAsyncError: comm is not a live communicator");
  if (asyncError == nullptr)
    return setError(weftInvalidArgument, "weftCommGetAsyncError: asyncError is NULL");
  std::lock_guard<std::mutex> lock(comm->failMu);
  *asyncError = comm->failure;
  if (comm->failure != weftSuccess) setErrorString(weftSuccess, comm->failureText);
  return weftSuccess;
}

extern "C" weftResult_t weftCommGpuCtas(const weftComm_t comm, size_t count,
                                        weftDataType_t datatype, int* ctas) {
  clearError();
  WEFT_CHECK(checkComm(comm, "weftCommGpuCtas"));
  if (ctas == nullptr) return setError(weftInvalidArgument, "weftCommGpuCtas: ctas is NULL");
  const int rawType = rawEnum(datatype);
  if (rawType < 0 || rawType >= weftNumTypes)
    return setError(weftInvalidArgument, "weftCommGpuCtas: datatype=%d is not a weftDataType_t",
                    rawType);
  // Saturates rather than wraps: a count too large for any buffer still
  // asks for every channel.
  const size_t esize = datatypeSize(datatype);
  const uint64_t bytes = count > UINT64_MAX / esize ? UINT64_MAX : count * esize;
  *ctas = ringCtasFor(comm, bytes);
  return weftSuccess;
}
