// Groups with calls on streams (stream_group.h).
#include "device/stream_group.h"

#include <cstring>
#include <string>

#include "base/error.h"
#include "core/comm.h"
#include "device/staging_plan.h"
#include "device/stream_part.h"

namespace weft {

// Quadratic in the group's calls, which is cheap next to the two copies each
// call enqueues.
weftResult_t checkStreamGroup(const char* fn, const std::vector<Call>& calls, int rank,
                              int nranks) {
  for (size_t j = 1; j < calls.size(); ++j) {
    BufferUse later[2];
    const int nl = buffersOf(calls[j], rank, nranks, later);
    for (int b = 0; b < nl; ++b) {
      if (std::strcmp(later[b].name, "sendbuff") != 0) continue;
      const char* lo = static_cast<const char*>(later[b].ptr);
      for (size_t i = 0; i < j; ++i) {
        BufferUse earlier[2];
        const int ne = buffersOf(calls[i], rank, nranks, earlier);
        for (int a = 0; a < ne; ++a) {
          if (std::strcmp(earlier[a].name, "recvbuff") != 0) continue;
          const char* out = static_cast<const char*>(earlier[a].ptr);
          if (lo < out + earlier[a].bytes && out < lo + later[b].bytes)
            return setError(weftInvalidUsage,
                            "%s: call %zu of the group (%s) reads sendbuff that call %zu (%s) "
                            "writes; on a stream a group's inputs are all staged before its "
                            "first call runs: end the group between the two",
                            fn, j + 1, describeCall(calls[j]).c_str(), i + 1,
                            describeCall(calls[i]).c_str());
        }
      }
    }
  }
  return weftSuccess;
}

weftResult_t enqueueStreamGroup(const char* fn, const std::vector<StreamGroupPart>& in) {
  for (const StreamGroupPart& part : in) WEFT_CHECK(refuseIfBroken(part.comm, fn));
  std::vector<StreamPart> parts(in.size());
  auto failed = [&](size_t i, weftResult_t r) {
    return setErrorString(r, std::string(fn) + ": could not enqueue on the stream of rank " +
                                 std::to_string(in[i].comm->rank) + ": " + lastError());
  };
  // What may fail without a trace first: staging for every part.
  for (size_t i = 0; i < in.size(); ++i) {
    const std::vector<Call>& calls = *in[i].calls;
    weftResult_t r = prepareStreamPart(in[i].comm, calls, calls.front().stream, &parts[i]);
    if (r != weftSuccess) {
      for (size_t j = 0; j < i; ++j) dropStreamPart(&parts[j]);
      return failed(i, r);
    }
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    weftResult_t r = enqueueStreamPart(&parts[i]);
    if (r != weftSuccess) {
      for (size_t j = 0; j < i; ++j) cancelStreamPart(&parts[j]);
      for (size_t j = i + 1; j < parts.size(); ++j) dropStreamPart(&parts[j]);
      return failed(i, r);
    }
  }
  for (StreamPart& part : parts) submitStreamPart(&part);
  return weftSuccess;
}

}  // namespace weft
