// nccl-tests-style text report of the perf tools (see perf_report.h).
#include "perf_report.h"

#include <weft/weft.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

// Width of "size count type redop root" and of one placement's columns.
constexpr int kLeadWidth = 52;
constexpr int kGroupWidth = 33;

std::string Centered(const char* text, int width) {
  const int length = static_cast<int>(std::strlen(text));
  const int left = length < width ? (width - length) / 2 : 0;
  std::string line(static_cast<size_t>(left), ' ');
  line += text;
  if (static_cast<int>(line.size()) < width)
    line.append(static_cast<size_t>(width) - line.size(), ' ');
  return line;
}

std::string FormatTime(double time_us) {
  char text[32];
  if (time_us >= 10000.0) {
    std::snprintf(text, sizeof(text), "%7.0f", time_us);
  } else if (time_us >= 100.0) {
    std::snprintf(text, sizeof(text), "%7.1f", time_us);
  } else {
    std::snprintf(text, sizeof(text), "%7.2f", time_us);
  }
  return text;
}

void PrintPlacement(const PerfResult& result) {
  if (result.skipped) {
    std::printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  char wrong[32];
  if (result.wrong < 0) {
    std::snprintf(wrong, sizeof(wrong), "N/A");
  } else {
    std::snprintf(wrong, sizeof(wrong), "%lld", static_cast<long long>(result.wrong));
  }
  std::printf("  %7s  %6.2f  %6.2f  %6s", FormatTime(result.time_us).c_str(), result.algbw,
              result.busbw, wrong);
}

}  // namespace

void PerfPrintHeader(const char* tool, const PerfArgs& args, const PerfLaunch& launch,
                     const std::vector<PerfRankInfo>& ranks) {
  int version = 0;
  weftGetVersion(&version);
  std::printf("# %s %s\n", tool, args.command_line.c_str());
  std::printf("# weft %d.%d.%d, launch: %s, nRanks %d\n", version / 10000, version / 100 % 100,
              version % 100, launch.mode.c_str(), launch.nranks);
  std::printf("# nThread %d nGpus %d", args.nthreads, args.ngpus);
  if (args.step_factor > 1) {
    std::printf(" minBytes %zu maxBytes %zu step: %zu(factor)", args.min_bytes, args.max_bytes,
                args.step_factor);
  } else {
    std::printf(" minBytes %zu maxBytes %zu step: %zu(bytes)", args.min_bytes, args.max_bytes,
                args.step_bytes);
  }
  std::printf(
      " warmup iters: %d iters: %d agg iters: %d validation: %d nonblocking: %d registered: %d "
      "average: %s\n",
      args.warmup_iters, args.iters, args.agg_iters, args.check ? 1 : 0, args.nonblocking ? 1 : 0,
      args.registered ? 1 : 0, PerfAverageName(args.average));
  std::printf("#\n# Using ranks\n");
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::printf("#  Rank %2zu Pid %6ld on %10s\n", r, ranks[r].pid, ranks[r].host.c_str());
  }
  std::printf("#\n");
  std::fflush(stdout);
}

void PerfPrintColumns() {
  std::printf("#%s%s%s\n", std::string(kLeadWidth - 1, ' ').c_str(),
              Centered("out-of-place", kGroupWidth).c_str(),
              Centered("in-place", kGroupWidth).c_str());
  std::printf("# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  for (int group = 0; group < 2; ++group) {
    std::printf("  %7s  %6s  %6s  %6s", "time", "algbw", "busbw", "#wrong");
  }
  std::printf("\n# %10s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  for (int group = 0; group < 2; ++group) {
    std::printf("  %7s  %6s  %6s  %6s", "(us)", "(GB/s)", "(GB/s)", "");
  }
  std::printf("\n");
  std::fflush(stdout);
}

void PerfPrintRow(const PerfResult& out_of_place, const PerfResult& in_place) {
  std::printf("%12zu  %12zu  %8s  %6s  %6d", out_of_place.bytes, out_of_place.count,
              out_of_place.type_name, out_of_place.op_name, out_of_place.root);
  PrintPlacement(out_of_place);
  PrintPlacement(in_place);
  std::printf("\n");
  std::fflush(stdout);
}

void PerfPrintErrorLine(const char* message) {
  std::printf("# ERROR: %s\n", message);
  std::fflush(stdout);
}

void PerfPrintFooter(int64_t wrong_total, bool checked, double avg_busbw) {
  if (checked) {
    std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(wrong_total),
                wrong_total == 0 ? "OK" : "FAILED");
  } else {
    std::printf("# Out of bounds values : N/A (check disabled)\n");
  }
  std::printf("# Avg bus bandwidth    : %g\n#\n", avg_busbw);
  std::fflush(stdout);
}
