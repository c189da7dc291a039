// Settings every rank must share (see config_agree.h).
#include "core/config_agree.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "bootstrap/wire.h"

namespace weft {
namespace {

// What this rank runs with for one knob: the value in effect, and for knobs
// whose unset state means "weft chooses", whether it was set at all.
std::string effectiveValue(const JobWideVar& v) {
  const bool set = configIsSet(v.name);
  if (v.setMatters && !set) return "(unset)";
  return configString(v.name);
}

}  // namespace

weftResult_t checkJobWideConfig(Bootstrap& bs) {
  const std::vector<JobWideVar>& vars = jobWideVars();
  const size_t k = vars.size(), n = static_cast<size_t>(bs.nranks());
  const size_t me = static_cast<size_t>(bs.rank());
  std::vector<uint64_t> mine(k);
  for (size_t i = 0; i < k; ++i) {
    const std::string value = effectiveValue(vars[i]);
    mine[i] = fnv1a(value.data(), value.size());
  }
  // First one digest of them all; only when the digests differ (every rank
  // sees that alike) a second exchange of the hash per knob, to name it.
  std::vector<uint64_t> digests(n);
  digests[me] = fnv1a(mine.data(), k * sizeof(uint64_t));
  WEFT_CHECK(bs.allgather(digests.data(), sizeof(uint64_t)));
  bool same = true;
  for (uint64_t d : digests) same = same && d == digests[0];
  if (same) return weftSuccess;
  std::vector<uint64_t> all(n * k, 0);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(me * k));
  WEFT_CHECK(bs.allgather(all.data(), k * sizeof(uint64_t)));
  for (size_t i = 0; i < k; ++i) {
    std::string differ;
    size_t count = 0;
    for (size_t r = 1; r < n; ++r) {
      if (all[r * k + i] == all[i]) continue;
      if (++count <= 8) differ += (differ.empty() ? "" : ",") + std::to_string(r);
    }
    if (count == 0) continue;
    if (count > 8) differ += ",...";
    const std::string value = effectiveValue(vars[i]);
    const char* quote = value == "(unset)" ? "" : "'";
    return setError(weftInvalidUsage,
                    "%s must be the same on every rank, but rank(s) %s run with a different "
                    "value than rank 0; this rank (%zu) has %s%s%s",
                    vars[i].name, differ.c_str(), me, quote, value.c_str(), quote);
  }
  return setError(weftInternalError, "job-wide settings: the digests differ but no knob does");
}

}  // namespace weft
