// Config: every WEFT_* environment knob is declared once, in config_table.cc
// (name, default, one-line doc), and read through these accessors. Reading an
// undeclared name is a programming error and aborts in debug builds, so the
// table (printed by weft-info and docs/env.md) is always complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

enum class ConfigType {
  kText,        // read as written: names, lists, paths (its reader checks it)
  kSize,        // an integer with K/M/G suffixes, within [lo, hi] (configSize)
  kSizeOrAuto,  // "auto", or a kSize (configSizeOrAuto)
  kSeconds,     // a positive number of seconds, fractions allowed (configSeconds)
  kSwitch,      // 0 or 1, written exactly so (configSwitch)
  kChoice,      // one of the words in `expected`, "a|b|c", in any case (configChoice)
};

struct ConfigVar {
  const char* name;
  const char* defaultValue;  // as it would be written in the environment
  const char* doc;
  ConfigType type = ConfigType::kText;
  int64_t lo = 0, hi = 0;  // kSize: the accepted range
  // kSize(OrAuto): what it takes, for the error ("1 to 16"); kChoice: the
  // words, "a|b|c".
  const char* expected = "";
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
// A kSize knob, checked against its row: weftInvalidArgument with
// "NAME=VALUE: expected <its words>" when malformed or out of range.
weftResult_t configSize(const char* name, int64_t* out);
// A kSwitch knob: weftInvalidArgument with "NAME=VALUE: expected 0 or 1"
// for anything but 0 or 1.
weftResult_t configSwitch(const char* name, bool* out);
// A kSizeOrAuto knob: *isAuto for "auto", else the size in *out, checked as configSize.
weftResult_t configSizeOrAuto(const char* name, bool* isAuto, int64_t* out);
// A kSeconds knob: weftInvalidArgument with "NAME=VALUE: expected a positive
// number of seconds" for anything else.
weftResult_t configSeconds(const char* name, double* out);
// A kChoice knob: one of its row's words, compared without case and returned
// as the row writes it; else weftInvalidArgument with "NAME=VALUE: expected
// a, b or c". Set but empty reads as unset (the default).
weftResult_t configChoice(const char* name, std::string* out);
// What a typed knob accepts, as its errors say it ("1 to 16", "0 or 1",
// "a, b or c"); "" for text knobs, which their readers check.
std::string configAccepts(const ConfigVar& var);
// The table's default of a numeric knob, whatever the environment says: for
// structures' initial values, so that each default is written once.
double configDefaultNumber(const char* name);
// True when the variable is set in the environment (even to the default).
bool configIsSet(const char* name);

// Parses "123", "64K", "1M", "2G"; returns false on garbage or overflow.
bool parseSize(const std::string& text, int64_t* out);

}  // namespace weft
