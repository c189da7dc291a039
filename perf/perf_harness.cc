// The perf tools' main loop (PerfMain in perf_collective.h): parse options,
// join the job, allocate buffers once for the largest size, then for every
// datatype x op x size time the collective out of place and in place, check
// it, and report.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "perf_args.h"
#include "perf_buffer.h"
#include "perf_collective.h"
#include "perf_datatype.h"
#include "perf_device.h"
#include "perf_error.h"
#include "perf_json.h"
#include "perf_launch.h"
#include "perf_measure.h"
#include "perf_progress.h"
#include "perf_report.h"
#include "perf_threads.h"

namespace {

// True when the tools can run this datatype with this weft.
bool Runnable(weftDataType_t type) {
  return PerfTypeOf(type).library_supports && PerfVisitType(type, [](auto) {});
}

// Element counts to run for one datatype: one per requested size, skipping
// sizes that round to the same count as the previous one.
std::vector<size_t> CountsFor(const PerfCollective& collective, const std::vector<size_t>& sizes,
                              size_t elem_size, int nranks) {
  std::vector<size_t> counts;
  for (size_t bytes : sizes) {
    const size_t count = collective.count_for_bytes(bytes, elem_size, nranks);
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

// Allocates send and receive buffers big enough for every run. Exits on failure.
void AllocateBuffers(const PerfCollective& collective, const PerfArgs& args,
                     const std::vector<size_t>& sizes, const PerfLaunch& launch, PerfBuffer* send,
                     PerfBuffer* recv) {
  size_t send_bytes = 0;
  size_t recv_bytes = 0;
  for (weftDataType_t type : args.types) {
    if (!Runnable(type)) continue;
    const size_t elem_size = PerfTypeOf(type).size;
    for (size_t count : CountsFor(collective, sizes, elem_size, launch.nranks)) {
      send_bytes = std::max(send_bytes, collective.send_elems(count, launch.nranks) * elem_size);
      recv_bytes = std::max(
          recv_bytes,
          PerfRecvAllocationElems(collective, count, launch.rank, launch.nranks) * elem_size);
    }
  }
  if (!send->Allocate(send_bytes, args.registered, args.device) ||
      !recv->Allocate(recv_bytes, args.registered, args.device)) {
    std::fprintf(stderr, "%s: rank %d: cannot allocate %zu + %zu bytes of buffers\n",
                 collective.tool_name, launch.rank, send_bytes, recv_bytes);
    PerfExit(1);
  }
}

// Opens the JSON file on rank 0; every rank learns whether that worked.
bool OpenJson(const PerfArgs& args, const PerfCollective& collective, const PerfLaunch& launch,
              PerfJsonWriter* json) {
  if (args.json_path.empty()) return true;
  int64_t failed = 0;
  if (launch.rank == 0 && !json->Open(args.json_path, collective.tool_name, launch.nranks)) {
    std::perror((std::string(collective.tool_name) + ": " + args.json_path).c_str());
    failed = 1;
  }
  int64_t any_failed = 0;
  PERF_WEFT_CHECK(launch.comm, weftAllReduce(&failed, &any_failed, 1, weftInt64, weftSum,
                                             launch.comm, WEFT_STREAM_HOST));
  return any_failed == 0;
}

struct Totals {
  int64_t wrong = 0;
  double busbw_sum = 0;
  int busbw_rows = 0;
  bool errors = false;
};

PerfResult MakeResult(const PerfCase& shape, const PerfCollective& collective, bool in_place,
                      double time_us, int64_t wrong) {
  const PerfTypeInfo& info = PerfTypeOf(shape.type);
  PerfResult result;
  result.skipped = in_place && !collective.has_in_place;
  result.root = collective.takes_root ? shape.root : -1;
  result.bytes = collective.bytes_for_count(shape.count, info.size, shape.nranks);
  result.count = shape.count;
  result.type_name = info.name;
  result.op_name = collective.takes_op ? PerfOpOf(shape.op).name : "none";
  result.in_place = in_place;
  result.time_us = time_us;
  result.algbw = time_us > 0 ? static_cast<double>(result.bytes) / time_us / 1e3 : 0.0;
  result.busbw = result.algbw * collective.busbw_factor(shape.nranks);
  result.wrong = wrong;
  return result;
}

// Times and checks one size, prints its row and adds it to the totals.
// Tools whose API has no in-place form leave the in-place half at zero and
// still take part in the cross-rank sums (every rank makes the same calls).
void RunOneSize(const PerfCase& shape, const PerfArgs& args, PerfJsonWriter* json, Totals* totals,
                PerfProgress* progress) {
  const PerfCollective& collective = *shape.collective;
  const bool in_place_runs = collective.has_in_place;
  double times_us[2] = {
      PerfTimeOnRank(shape, false, args.warmup_iters, args.iters),
      in_place_runs ? PerfTimeOnRank(shape, true, args.warmup_iters, args.iters) : 0.0};
  PerfCombineTimes(shape, args.average, times_us);
  int64_t wrong[2] = {-1, -1};
  if (args.check) {
    wrong[0] = PerfCheckOnRank(shape, false);
    wrong[1] = in_place_runs ? PerfCheckOnRank(shape, true) : 0;
    PerfSumOverRanks(shape, wrong);
    totals->wrong += wrong[0] + wrong[1];
    if (!in_place_runs) wrong[1] = -1;
  }
  const PerfResult out_of_place = MakeResult(shape, collective, false, times_us[0], wrong[0]);
  const PerfResult in_place = MakeResult(shape, collective, true, times_us[1], wrong[1]);
  totals->busbw_sum += out_of_place.busbw;
  totals->busbw_rows += 1;
  if (in_place_runs) {
    totals->busbw_sum += in_place.busbw;
    totals->busbw_rows += 1;
  }
  if (shape.rank == 0) {
    progress->Clear();
    PerfPrintRow(out_of_place, in_place);
    json->Add(out_of_place);
    if (in_place_runs) json->Add(in_place);
  }
}

// Every op this tool runs for a datatype; a collective without an op runs once.
std::vector<weftRedOp_t> OpsToRun(const PerfCollective& collective, const PerfArgs& args) {
  if (!collective.takes_op) return {weftSum};
  return args.ops;
}

void RunAll(const PerfCollective& collective, const PerfArgs& args, const PerfLaunch& launch,
            const PerfBuffer& send, const PerfBuffer& recv, PerfJsonWriter* json, Totals* totals) {
  const std::vector<size_t> sizes = PerfSizeList(args);
  char message[160];
  size_t cases = 0;
  for (weftDataType_t type : args.types)
    cases += OpsToRun(collective, args).size() *
             CountsFor(collective, sizes, PerfTypeOf(type).size, launch.nranks).size();
  PerfProgress progress(launch.rank == 0, cases);
  for (weftDataType_t type : args.types) {
    const PerfTypeInfo& info = PerfTypeOf(type);
    if (!Runnable(type)) {
      std::snprintf(message, sizeof(message), "datatype %s is not supported by weft yet",
                    info.name);
      if (launch.rank == 0) PerfPrintErrorLine(message);
      totals->errors = true;
      continue;
    }
    for (weftRedOp_t op : OpsToRun(collective, args)) {
      if (PerfOpOf(op).integers_only && !info.integer) {
        if (args.ops.size() > 1) continue;  // "-o all" runs the ops that apply to the type
        std::snprintf(message, sizeof(message), "reduction op %s applies to integer types only",
                      PerfOpOf(op).name);
        if (launch.rank == 0) PerfPrintErrorLine(message);
        totals->errors = true;
        continue;
      }
      if (!PerfOpOf(op).library_supports) {
        std::snprintf(message, sizeof(message), "reduction op %s is not supported by weft yet",
                      PerfOpOf(op).name);
        if (launch.rank == 0) PerfPrintErrorLine(message);
        totals->errors = true;
        continue;
      }
      PerfCase shape;
      shape.collective = &collective;
      shape.comm = launch.comm;
      shape.rank = launch.rank;
      shape.nranks = launch.nranks;
      shape.root = args.root;
      shape.type = type;
      shape.op = op;
      shape.send = send.data();
      shape.recv = recv.data();
      shape.nonblocking = args.nonblocking;
      shape.agg_iters = args.agg_iters;
      shape.stream = args.device ? PerfDeviceStream() : nullptr;
      for (size_t count : CountsFor(collective, sizes, info.size, launch.nranks)) {
        shape.count = count;
        std::snprintf(message, sizeof(message), "%s %s %zu B", info.name, PerfOpOf(op).name,
                      count * info.size);
        progress.Step(message);
        RunOneSize(shape, args, json, totals, &progress);
      }
    }
  }
}

// Everything one rank does once it has its communicator; returns its exit status.
int RunRank(const PerfCollective& collective, const PerfArgs& args, const PerfLaunch& launch) {
  const char* tool = collective.tool_name;
  if (collective.takes_root && args.root >= launch.nranks) {
    if (launch.rank == 0) {
      std::fprintf(stderr, "%s: root %d (-r) is not a rank of %d\n", tool, args.root,
                   launch.nranks);
    }
    return 2;
  }
  const std::vector<PerfRankInfo> ranks = PerfGatherRankInfo(launch);
  PerfBuffer send;
  PerfBuffer recv;
  AllocateBuffers(collective, args, PerfSizeList(args), launch, &send, &recv);
  PerfJsonWriter json;
  if (!OpenJson(args, collective, launch, &json)) return 1;

  if (launch.rank == 0) {
    PerfPrintHeader(tool, args, launch, ranks);
    PerfPrintColumns();
  }
  Totals totals;
  for (int cycle = 0; args.run_cycles == 0 || cycle < args.run_cycles; ++cycle)
    RunAll(collective, args, launch, send, recv, &json, &totals);
  const double avg_busbw = totals.busbw_rows > 0 ? totals.busbw_sum / totals.busbw_rows : 0.0;
  int status = (totals.wrong != 0 || totals.errors) ? 1 : 0;
  if (launch.rank == 0) {
    PerfPrintFooter(totals.wrong, args.check, avg_busbw);
    if (!json.Close()) {
      std::fprintf(stderr, "%s: writing %s failed\n", tool, args.json_path.c_str());
      status = 1;
    }
  }
  return status;
}

}  // namespace

int PerfMain(int argc, char** argv, const PerfCollective& collective) {
  const char* tool = collective.tool_name;
  PerfArgs args;
  std::string error;
  const bool parsed = PerfParseArgs(argc, argv, &args, &error);
  if (!parsed || args.help) {
    if (PerfLaunchRankHint() == 0) {
      if (parsed) {
        PerfPrintUsage(stdout, tool);
      } else {
        std::fprintf(stderr, "%s: %s (-h for help)\n", tool, error.c_str());
      }
    }
    return parsed ? 0 : 2;
  }

  if (args.device) {
    // Before the communicator exists: weft's GPU ring is set up on the device
    // that is current when it is created.
    const std::string why = PerfDeviceSetUp();
    if (!why.empty()) {
      std::fprintf(stderr, "%s: -D 1: %s\n", tool, why.c_str());
      return 1;
    }
  }
  PerfLaunch launch;
  PerfLaunchInit(&argc, &argv, tool, &launch);
  const int per_process = PerfRanksPerProcess(args);
  const int status =
      per_process == 1
          ? RunRank(collective, args, launch)
          : PerfRunThreadRanks(launch, per_process, [&](const PerfLaunch& rank_launch) {
              return RunRank(collective, args, rank_launch);
            });
  PerfLaunchFinish(&launch);
  return status;
}
