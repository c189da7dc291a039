// Command-line options of the perf tools, with nccl-tests' flags and defaults.
#ifndef WEFT_PERF_PERF_ARGS_H
#define WEFT_PERF_PERF_ARGS_H

#include <weft/weft.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

// How per-rank times are combined into the printed time (-a).
enum class PerfAverage { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

struct PerfArgs {
  size_t min_bytes = 32u << 20;                       // -b
  size_t max_bytes = 32u << 20;                       // -e
  size_t step_factor = 2;                             // -f; sizes grow multiplicatively when > 1
  size_t step_bytes = 1u << 20;                       // -i; additive step when step_factor <= 1
  int warmup_iters = 5;                               // -w
  int iters = 20;                                     // -n
  bool check = true;                                  // -c
  std::vector<weftDataType_t> types = {weftFloat32};  // -d
  std::vector<weftRedOp_t> ops = {weftSum};           // -o
  PerfAverage average = PerfAverage::kMean;           // -a
  int root = 0;                                       // -r (broadcast, reduce)
  std::string json_path;                              // -J
  bool nonblocking = false;                           // -z
  bool registered = false;                            // -R: buffers from weftHostAlloc
  bool device = false;                                // -D: CUDA device buffers, calls on a stream
  // nccl-tests runs t threads x g GPUs per process, one rank each; here each
  // of those ranks is a thread of its own with a communicator of its own.
  int nthreads = 1;            // -t
  int ngpus = 1;               // -g
  int agg_iters = 1;           // -m: calls per timed iteration, in one weftGroupStart/End
  int run_cycles = 1;          // -N: how many times to run the whole sweep; 0 = until killed
  bool parallel_init = false;  // -p: accepted; a process's ranks always join at once
  bool help = false;           // -h
  std::string command_line;    // for the header
};

// Ranks this process runs (-t x -g).
inline int PerfRanksPerProcess(const PerfArgs& args) { return args.nthreads * args.ngpus; }

// Parses argv into *args. On a bad option returns false with *error set.
bool PerfParseArgs(int argc, char** argv, PerfArgs* args, std::string* error);
void PerfPrintUsage(FILE* out, const char* prog);
// Requested sizes in bytes, from min to max with the configured step.
std::vector<size_t> PerfSizeList(const PerfArgs& args);
// "K/M/G" suffixed, 1024-based. Returns false on garbage or overflow.
bool PerfParseBytes(const char* text, size_t* bytes);
const char* PerfAverageName(PerfAverage average);

#endif  // WEFT_PERF_PERF_ARGS_H
