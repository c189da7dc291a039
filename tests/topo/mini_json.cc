// Recursive-descent reader for the JSON subset in mini_json.h.
#include "mini_json.h"

#include <cstdlib>
#include <stdexcept>

namespace weft::testing {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value();
    space();
    if (pos_ != text_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool take(char c) {
    space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char* w) {
    std::string s(w);
    if (text_.compare(pos_, s.size(), s) == 0) return pos_ += s.size(), true;
    return false;
  }

  JsonValue value() {
    space();
    if (pos_ >= text_.size()) fail("unexpected end");
    JsonValue v;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = JsonValue::Kind::kObject;
      if (take('}')) return v;
      do {
        space();
        std::string key = string();
        expect(':');
        v.members[key] = value();
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++pos_;
      v.kind = JsonValue::Kind::kArray;
      if (take(']')) return v;
      do v.items.push_back(value());
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.text = string();
    } else if (word("true")) {
      v.kind = JsonValue::Kind::kBool, v.boolean = true;
    } else if (word("false")) {
      v.kind = JsonValue::Kind::kBool;
    } else if (word("null")) {
      v.kind = JsonValue::Kind::kNull;
    } else {
      char* end = nullptr;
      v.number = std::strtod(text_.c_str() + pos_, &end);
      if (end == text_.c_str() + pos_) fail("unexpected character");
      v.kind = JsonValue::Kind::kNumber;
      pos_ = static_cast<size_t>(end - text_.c_str());
    }
    return v;
  }

  std::string string() {
    if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("bad escape");
      char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) fail("bad \\u escape");
          unsigned long cp = std::strtoul(text_.substr(pos_, 4).c_str(), nullptr, 16);
          pos_ += 4;
          // Topology names are ASCII; anything else is kept as '?'.
          out += cp < 0x80 ? static_cast<char>(cp) : '?';
          break;
        }
        default:
          out += e;
      }
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue& JsonValue::operator[](const std::string& key) const {
  auto it = members.find(key);
  if (it == members.end()) throw std::runtime_error("JSON: no member \"" + key + "\"");
  return it->second;
}

std::vector<std::string> JsonValue::strings() const {
  std::vector<std::string> out;
  for (const JsonValue& v : items) out.push_back(v.text);
  return out;
}

JsonValue parseJson(const std::string& text) { return Reader(text).document(); }

}  // namespace weft::testing
