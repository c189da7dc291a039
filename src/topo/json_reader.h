// A small JSON reader for the description files weft takes (WEFT_FABRIC):
// objects, arrays, strings (with \" \\ \/ \b \f \n \r \t and \uXXXX below
// U+0080), numbers, true, false and null. A document that is not JSON gets a
// sentence with the line and column of the first fault; nothing is guessed.
// Objects keep their keys in file order, so that errors and listings follow
// the file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace weft {
namespace topo {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;                                     // kString
  std::vector<JsonValue> items;                         // kArray
  std::vector<std::pair<std::string, JsonValue>> keys;  // kObject, in file order

  // The member named `key`, or nullptr (also when this is not an object).
  const JsonValue* find(const std::string& key) const;
  // "object", "array", ...: for error sentences.
  const char* kindName() const;
};

// Parses `text` into *out. False with *why set ("line 3, column 7: expected
// ':' after an object key") when it is not one JSON document.
bool parseJson(const std::string& text, JsonValue* out, std::string* why);

}  // namespace topo
}  // namespace weft
