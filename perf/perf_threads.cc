// Ranks as threads of one process (see perf_threads.h).
#include "perf_threads.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "perf_error.h"

int PerfRunThreadRanks(const PerfLaunch& process, int per_process,
                       const std::function<int(const PerfLaunch&)>& body) {
  weftUniqueId id = {};
  if (process.rank == 0) PERF_WEFT_CHECK(nullptr, weftGetUniqueId(&id));
  PERF_WEFT_CHECK(process.comm, weftBroadcast(&id, &id, sizeof(id), weftUint8, 0, process.comm,
                                              WEFT_STREAM_HOST));
  const int nranks = process.nranks * per_process;
  std::vector<int> status(static_cast<size_t>(per_process), 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < per_process; ++i) {
    threads.emplace_back([&, i] {
      PerfLaunch mine;
      mine.rank = process.rank * per_process + i;
      mine.nranks = nranks;
      mine.mode = process.mode + ", " + std::to_string(per_process) + " ranks per process";
      // weftCommInitRank returns once every rank joined: the threads join together.
      PERF_WEFT_CHECK(nullptr, weftCommInitRank(&mine.comm, nranks, id, mine.rank));
      status[static_cast<size_t>(i)] = body(mine);
      PERF_WEFT_CHECK(mine.comm, weftCommDestroy(mine.comm));
    });
  }
  for (std::thread& t : threads) t.join();
  return *std::max_element(status.begin(), status.end());
}
