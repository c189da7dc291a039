// weft-info: prints weft's version, what this build includes, and every WEFT_*
// variable with its default, current value and meaning (from the one config
// table). `--env-markdown` prints the table that docs/env.md holds; a test
// checks that the two agree.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/build_info.h"
#include "base/config.h"
#include "collectives/reduce_isa.h"
#include "weft/weft.h"

#ifndef WEFT_BUILD_FEATURES
#define WEFT_BUILD_FEATURES "unknown"
#endif

int main(int argc, char** argv) {
  bool markdown = argc > 1 && std::strcmp(argv[1], "--env-markdown") == 0;
  if (argc > 1 && !markdown) {
    std::fprintf(stderr, "usage: weft-info [--env-markdown]\n");
    return 2;
  }
  if (markdown) {
    std::printf("# Environment variables\n\n");
    std::printf("Every knob weft reads, from its one config table (`src/base/config_table.cc`);\n");
    std::printf(
        "`weft-info` prints the same with the current values. Sizes take K/M/G (powers of "
        "1024);\nwords are read in any case; a variable set but empty reads as unset where it "
        "takes words.\nA value outside \"takes\" fails communicator init with a sentence "
        "naming it.\n\n");
    std::printf("| variable | default | takes | meaning |\n|---|---|---|---|\n");
    for (const weft::ConfigVar& v : weft::configVars()) {
      bool jobWide = false;
      for (const weft::JobWideVar& j : weft::jobWideVars())
        jobWide = jobWide || std::strcmp(j.name, v.name) == 0;
      std::printf("| `%s` | `%s` | %s | %s%s |\n", v.name,
                  v.defaultValue[0] ? v.defaultValue : "(unset)", weft::configAccepts(v).c_str(),
                  v.doc, jobWide ? " Same on every rank (checked at init)." : "");
    }
    return 0;
  }
  int version = 0;
  weftGetVersion(&version);
  std::printf("weft %d.%d.%d (version code %d)\n", version / 10000, version / 100 % 100,
              version % 100, version);
  std::printf("optional dependencies found at configure: %s\n", WEFT_BUILD_FEATURES);
  // From the library itself (base/build_info.h), not from this program's flags.
  weft::BuildInfo built = weft::buildInfo();
  std::printf("transports built: %s\n", weft::transportsBuilt().c_str());
  std::printf("CUDA buffers: %s\n",
              built.cuda ? "yes (stream calls, GPU ring kernel)" : "no (built without CUDA)");
  std::printf("host reduction kernels: %s (of those this CPU runs:",
              weft::reduceIsaName(weft::reduceIsaActive()));
  for (weft::ReduceIsa isa :
       {weft::ReduceIsa::kScalar, weft::ReduceIsa::kAvx2, weft::ReduceIsa::kAvx512}) {
    if (weft::reduceIsaSupported(isa)) std::printf(" %s", weft::reduceIsaName(isa));
  }
  std::printf(")\n\n");
  std::printf("%-22s %-10s %-12s %s\n", "variable", "default", "value", "meaning");
  for (const weft::ConfigVar& v : weft::configVars()) {
    const char* cur = std::getenv(v.name);
    std::printf("%-22s %-10s %-12s %s\n", v.name, v.defaultValue[0] ? v.defaultValue : "-",
                cur ? cur : "-", v.doc);
  }
  return 0;
}
