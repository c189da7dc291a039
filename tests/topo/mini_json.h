// A minimal JSON reader for the topology tests (expected.json): objects,
// arrays, strings, numbers, true/false/null. Test-only; it throws
// std::runtime_error with the offset on malformed input.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace weft::testing {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<JsonValue> items;
  std::map<std::string, JsonValue> members;

  bool isNull() const { return kind == Kind::kNull; }
  bool has(const std::string& key) const { return members.count(key) != 0; }
  // Member access; throws when absent.
  const JsonValue& operator[](const std::string& key) const;
  std::vector<std::string> strings() const;  // an array of strings
};

JsonValue parseJson(const std::string& text);

}  // namespace weft::testing
