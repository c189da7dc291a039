// Config: every WEFT_* environment knob is declared once, in config_table.cc
// (name, default, one-line doc), and read through these accessors. Reading an
// undeclared name is a programming error and aborts in debug builds, so the
// table (printed by weft-info and docs/env.md) is always complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

struct ConfigVar {
  const char* name;
  const char* defaultValue;  // as it would be written in the environment
  const char* doc;
};

const std::vector<ConfigVar>& configVars();

// Knobs that must be the same on every rank of a job (core/config_agree.h
// checks at init). `setMatters`: set or unset must agree too, because unset
// means "chosen by weft" rather than the default value.
struct JobWideVar {
  const char* name;
  bool setMatters;
};
const std::vector<JobWideVar>& jobWideVars();

// The environment's value, else the declared default.
std::string configString(const char* name);
// Integer knobs accept K/M/G suffixes (powers of 1024). A malformed value logs a
// warning once and falls back to the default.
int64_t configInt(const char* name);
double configDouble(const char* name);
// True when the variable is set in the environment (even to the default).
bool configIsSet(const char* name);

// Parses "123", "64K", "1M", "2G"; returns false on garbage or overflow.
bool parseSize(const std::string& text, int64_t* out);

}  // namespace weft
