// Chooses the ISA variant of the reduction kernels once per process (see
// reduce_isa.h): the CPU's features as libgcc reads them (which includes the
// OS saving the wider registers), narrowed by WEFT_REDUCE_ISA.
#include <strings.h>

#include <string>

#include "base/config.h"
#include "base/datatype.h"
#include "base/log.h"
#include "collectives/reduce_isa.h"

namespace weft {
namespace {

const ReduceKernels* tableOf(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kScalar:
      return reduceKernelsScalar();
    case ReduceIsa::kAvx2:
      return reduceKernelsAvx2();
    case ReduceIsa::kAvx512:
      return reduceKernelsAvx512();
  }
  return nullptr;
}

bool cpuRuns(ReduceIsa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();  // may run before libgcc's own constructor did
  switch (isa) {
    case ReduceIsa::kScalar:
      return true;
    // F16C converts binary16 in both vector variants; every CPU with AVX2
    // or AVX-512 that we know of has it, but ask rather than fault.
    case ReduceIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    case ReduceIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("f16c");
  }
  return false;
#else
  return isa == ReduceIsa::kScalar;
#endif
}

ReduceIsa widestSupported() {
  if (reduceIsaSupported(ReduceIsa::kAvx512)) return ReduceIsa::kAvx512;
  if (reduceIsaSupported(ReduceIsa::kAvx2)) return ReduceIsa::kAvx2;
  return ReduceIsa::kScalar;
}

ReduceIsa chooseIsa() {
  const ReduceIsa best = widestSupported();
  const std::string wanted = configString("WEFT_REDUCE_ISA");
  ReduceIsa chosen = best;
  if (!wanted.empty() && strcasecmp(wanted.c_str(), "auto") != 0) {
    bool known = false;
    for (int i = 0; i < kNumReduceIsas; ++i) {
      const ReduceIsa isa = static_cast<ReduceIsa>(i);
      if (strcasecmp(wanted.c_str(), reduceIsaName(isa)) != 0) continue;
      known = true;
      if (reduceIsaSupported(isa)) {
        chosen = isa;
      } else {
        WEFT_WARN(INIT, "WEFT_REDUCE_ISA=%s: this CPU or build cannot run it; using %s",
                  wanted.c_str(), reduceIsaName(best));
      }
    }
    if (!known) {
      WEFT_WARN(INIT, "WEFT_REDUCE_ISA=%s is not auto, avx512, avx2 or scalar; using %s",
                wanted.c_str(), reduceIsaName(best));
    }
  }
  WEFT_INFO(INIT, "host reductions use the %s kernels", reduceIsaName(chosen));
  return chosen;
}

}  // namespace

const char* reduceIsaName(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kScalar:
      return "scalar";
    case ReduceIsa::kAvx2:
      return "avx2";
    case ReduceIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool reduceIsaSupported(ReduceIsa isa) { return tableOf(isa) != nullptr && cpuRuns(isa); }

bool reduceArgsKnown(weftDataType_t dt, weftRedOp_t op) {
  return static_cast<int>(dt) >= 0 && static_cast<int>(dt) < weftNumTypes &&
         static_cast<int>(op) >= 0 && static_cast<int>(op) < weftNumOps && redOpApplies(dt, op);
}

ReduceIsa reduceIsaActive() {
  static const ReduceIsa isa = chooseIsa();
  return isa;
}

const ReduceKernels& reduceKernelsActive() {
  static const ReduceKernels* const table = tableOf(reduceIsaActive());
  return *table;
}

void reduceElementsWith(ReduceIsa isa, weftDataType_t dt, weftRedOp_t op, void* dst, const void* a,
                        const void* b, size_t count) {
  const ReduceKernels* table = tableOf(isa);
  if (table == nullptr || !reduceArgsKnown(dt, op)) return;
  table->combine[dt][op](dst, a, b, count);
}

void finishAverageWith(ReduceIsa isa, weftDataType_t dt, void* buf, size_t count, int nranks) {
  const ReduceKernels* table = tableOf(isa);
  if (table == nullptr || !reduceArgsKnown(dt, weftSum) || nranks <= 0) return;
  table->divide[dt](buf, count, nranks);
}

}  // namespace weft
