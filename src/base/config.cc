// Reads the knobs declared in config_table.cc from the environment.
#include "base/config.h"

#include <strings.h>

#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "base/error.h"
#include "base/log.h"

namespace weft {
namespace {

const ConfigVar* findVar(const char* name) {
  for (const ConfigVar& v : configVars()) {
    if (std::strcmp(v.name, name) == 0) return &v;
  }
  assert(false && "undeclared WEFT_ knob: add it to config_table.cc");
  return nullptr;
}

void warnOnce(const char* name, const std::string& value) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(name).second) {
    WEFT_WARN(INIT, "%s=%s is not valid; using the default", name, value.c_str());
  }
}

}  // namespace

bool parseSize(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return false;
  int64_t mult = 1;
  if (*end == 'K' || *end == 'k')
    mult = 1LL << 10, ++end;
  else if (*end == 'M' || *end == 'm')
    mult = 1LL << 20, ++end;
  else if (*end == 'G' || *end == 'g')
    mult = 1LL << 30, ++end;
  if (*end != '\0') return false;
  if (v != 0 && (v > INT64_MAX / mult || v < INT64_MIN / mult)) return false;
  *out = v * mult;
  return true;
}

double configDefaultNumber(const char* name) {
  const ConfigVar* var = findVar(name);
  int64_t size = 0;
  if (var == nullptr) return 0;
  if (parseSize(var->defaultValue, &size)) return static_cast<double>(size);
  return std::strtod(var->defaultValue, nullptr);
}

namespace {
// A typed knob's row, or nullptr (weftInternalError: a reader asked the wrong kind).
const ConfigVar* typedRow(const char* name, ConfigType type, const char* kind) {
  const ConfigVar* var = findVar(name);
  if (var != nullptr && var->type == type) return var;
  setError(weftInternalError, "%s is not a %s knob", name, kind);
  return nullptr;
}

// The one sentence a malformed typed knob gets.
weftResult_t refuse(const ConfigVar& var, const std::string& text) {
  return setError(weftInvalidArgument, "%s=%s: expected %s", var.name, text.c_str(),
                  configAccepts(var).c_str());
}
// A size within the row's [lo, hi], else the row's refusal.
weftResult_t sizeInRange(const ConfigVar& var, const std::string& text, int64_t* out) {
  if (!parseSize(text, out) || *out < var.lo || *out > var.hi) return refuse(var, text);
  return weftSuccess;
}

// The words of a kChoice row ("a|b|c"), in order.
std::vector<std::string> choiceWords(const ConfigVar& var) {
  std::vector<std::string> words;
  const std::string all = var.expected;
  for (size_t at = 0;;) {
    const size_t bar = all.find('|', at);
    words.push_back(all.substr(at, bar == std::string::npos ? bar : bar - at));
    if (bar == std::string::npos) return words;
    at = bar + 1;
  }
}
}  // namespace

weftResult_t configSize(const char* name, int64_t* out) {
  const ConfigVar* var = typedRow(name, ConfigType::kSize, "size");
  if (var == nullptr) return weftInternalError;
  return sizeInRange(*var, configString(name), out);
}

weftResult_t configSwitch(const char* name, bool* out) {
  const ConfigVar* var = typedRow(name, ConfigType::kSwitch, "switch");
  if (var == nullptr) return weftInternalError;
  const std::string text = configString(name);
  if (text != "0" && text != "1") return refuse(*var, text);
  *out = text == "1";
  return weftSuccess;
}

weftResult_t configSizeOrAuto(const char* name, bool* isAuto, int64_t* out) {
  const ConfigVar* var = typedRow(name, ConfigType::kSizeOrAuto, "size-or-auto");
  if (var == nullptr) return weftInternalError;
  const std::string text = configString(name);
  *isAuto = text == "auto";
  return *isAuto ? weftSuccess : sizeInRange(*var, text, out);
}

weftResult_t configSeconds(const char* name, double* out) {
  const ConfigVar* var = typedRow(name, ConfigType::kSeconds, "seconds");
  if (var == nullptr) return weftInternalError;
  const std::string text = configString(name);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // NaN and infinity fail the comparisons or the bound: a wait must end.
  if (text.empty() || errno != 0 || *end != '\0' || !(v > 0 && v < 1e12)) return refuse(*var, text);
  *out = v;
  return weftSuccess;
}

weftResult_t configChoice(const char* name, std::string* out) {
  const ConfigVar* var = typedRow(name, ConfigType::kChoice, "choice");
  if (var == nullptr) return weftInternalError;
  std::string text = configString(name);
  if (text.empty()) text = var->defaultValue;
  for (const std::string& word : choiceWords(*var)) {
    if (strcasecmp(word.c_str(), text.c_str()) == 0) {
      *out = word;
      return weftSuccess;
    }
  }
  // A default outside the words ("" for "not forced") is accepted as itself.
  if (text == var->defaultValue) {
    *out = text;
    return weftSuccess;
  }
  return refuse(*var, text);
}

std::string configAccepts(const ConfigVar& var) {
  switch (var.type) {
    case ConfigType::kSize:
      return var.expected;
    case ConfigType::kSizeOrAuto:
      return std::string("auto or ") + var.expected;
    case ConfigType::kSeconds:
      return "a positive number of seconds";
    case ConfigType::kSwitch:
      return "0 or 1";
    case ConfigType::kChoice: {
      const std::vector<std::string> words = choiceWords(var);
      std::string said;  // "a, b or c"
      for (size_t i = 0; i < words.size(); ++i)
        said += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
      return said;
    }
    default:
      return "";
  }
}

std::string configString(const char* name) {
  const ConfigVar* var = findVar(name);
  const char* env = std::getenv(name);
  if (env != nullptr) return env;
  return var ? var->defaultValue : "";
}

bool configIsSet(const char* name) {
  findVar(name);
  return std::getenv(name) != nullptr;
}

int64_t configInt(const char* name) {
  const ConfigVar* var = findVar(name);
  int64_t v = 0;
  std::string s = configString(name);
  if (parseSize(s, &v)) return v;
  if (var && std::getenv(name) != nullptr) warnOnce(name, s);
  if (var && parseSize(var->defaultValue, &v)) return v;
  return 0;
}

double configDouble(const char* name) {
  const ConfigVar* var = findVar(name);
  std::string s = configString(name);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (!s.empty() && end && *end == '\0') return v;
  if (var && std::getenv(name) != nullptr) warnOnce(name, s);
  return var ? std::strtod(var->defaultValue, nullptr) : 0.0;
}

}  // namespace weft
