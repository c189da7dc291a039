// Recursive-descent JSON reader (see json_reader.h). Depth is bounded so that
// a hostile file cannot exhaust the stack.
#include "topo/json_reader.h"

#include <cstdlib>
#include <cstring>

namespace weft {
namespace topo {
namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}

  bool document(JsonValue* out) {
    if (!value(out, 0)) return false;
    space();
    if (pos_ != s_.size()) return fail("unexpected text after the document");
    return true;
  }
  std::string why() const { return why_; }

 private:
  bool fail(const std::string& what) {
    if (!why_.empty()) return false;
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    why_ = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what;
    return false;
  }

  void space() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) != nullptr) ++pos_;
  }

  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  bool value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than 64 levels");
    space();
    if (pos_ >= s_.size()) return fail("unexpected end of the document");
    char c = s_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->kind = JsonValue::Kind::kString;
      return string(&out->text);
    }
    if (literal("true") || literal("false")) {
      out->kind = JsonValue::Kind::kBool;
      out->boolean = c == 't';
      return true;
    }
    if (literal("null")) {
      out->kind = JsonValue::Kind::kNull;
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail(std::string("unexpected character '") + c + "'");
  }

  bool number(JsonValue* out) {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin) return fail("malformed number");
    for (const char* c = begin; c < end; ++c)  // strtod also takes inf, nan and hex
      if (std::strchr("0123456789+-.eE", *c) == nullptr) return fail("malformed number");
    pos_ += static_cast<size_t>(end - begin);
    out->kind = JsonValue::Kind::kNumber;
    out->number = v;
    return true;
  }

  bool string(std::string* out) {
    ++pos_;  // the opening quote
    out->clear();
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character inside a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      const char* from = "\"\\/bfnrt";
      const char* to = "\"\\/\b\f\n\r\t";
      const char* at = std::strchr(from, e);
      if (e != 'u' && (at == nullptr || e == '\0')) return fail("unknown escape in a string");
      if (e != 'u') {
        out->push_back(to[at - from]);
        continue;
      }
      if (pos_ + 4 > s_.size()) break;
      char hex[5] = {s_[pos_], s_[pos_ + 1], s_[pos_ + 2], s_[pos_ + 3], 0};
      char* end = nullptr;
      long code = std::strtol(hex, &end, 16);
      if (end != hex + 4) return fail("malformed \\u escape");
      if (code >= 0x80) return fail("\\u escapes above U+007F are not supported");
      out->push_back(static_cast<char>(code));
      pos_ += 4;
    }
    return fail("unterminated string");
  }

  bool array(JsonValue* out, int depth) {
    ++pos_;
    out->kind = JsonValue::Kind::kArray;
    space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  bool object(JsonValue* out, int depth) {
    ++pos_;
    out->kind = JsonValue::Kind::kObject;
    space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a string as object key");
      std::string key;
      if (!string(&key)) return false;
      if (out->find(key) != nullptr) return fail("key \"" + key + "\" appears twice");
      space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':' after an object key");
      ++pos_;
      out->keys.emplace_back(key, JsonValue());
      if (!value(&out->keys.back().second, depth + 1)) return false;
      space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string why_;
};

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
  for (const auto& kv : keys)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const char* JsonValue::kindName() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

bool parseJson(const std::string& text, JsonValue* out, std::string* why) {
  *out = JsonValue();
  Reader r(text);
  if (r.document(out)) return true;
  *why = r.why();
  return false;
}

}  // namespace topo
}  // namespace weft
