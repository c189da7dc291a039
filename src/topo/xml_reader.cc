// The XML subset reader behind topology files (see xml_reader.h). It walks the
// text once with an explicit stack of open elements, so deep nesting cannot
// overflow the C++ stack.
#include "topo/xml_reader.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace weft::topo {
namespace {

// Refuses absurd nesting (a crafted file) long before memory is a concern.
constexpr size_t kMaxDepth = 4096;

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == ':' || (static_cast<unsigned char>(c) >= 0x80);
}

class Cursor {
 public:
  explicit Cursor(const std::string& text) : text_(text) {}

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  bool startsWith(const char* s) const { return text_.compare(pos_, std::strlen(s), s) == 0; }
  int line() const { return line_; }

  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') ++line_;
    }
  }
  void skipSpace() {
    while (!atEnd() && std::isspace(static_cast<unsigned char>(peek()))) advance();
  }
  // Moves past the next occurrence of `s`; false when it never comes.
  bool skipPast(const char* s) {
    size_t found = text_.find(s, pos_);
    if (found == std::string::npos) return false;
    advance(found + std::strlen(s) - pos_);
    return true;
  }
  std::string readName() {
    size_t start = pos_;
    while (!atEnd() && isNameChar(peek())) advance();
    return text_.substr(start, pos_ - start);
  }
  // <!DOCTYPE ...> may hold an internal subset in [...] with its own '>'.
  bool skipDoctype() {
    int bracket = 0;
    while (!atEnd()) {
      char c = peek();
      advance();
      if (c == '[')
        ++bracket;
      else if (c == ']')
        --bracket;
      else if (c == '>' && bracket <= 0)
        return true;
    }
    return false;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
};

std::string lineError(int line, const std::string& what) {
  return "line " + std::to_string(line) + ": " + what;
}

// Decodes &lt; &gt; &amp; &quot; &apos; &#N; &#xN; (UTF-8 out). False on an unknown entity.
bool decodeEntities(const std::string& raw, std::string* out) {
  out->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '&') {
      *out += raw[i];
      continue;
    }
    size_t semi = raw.find(';', i);
    if (semi == std::string::npos) return false;
    std::string ent = raw.substr(i + 1, semi - i - 1);
    if (ent == "lt")
      *out += '<';
    else if (ent == "gt")
      *out += '>';
    else if (ent == "amp")
      *out += '&';
    else if (ent == "quot")
      *out += '"';
    else if (ent == "apos")
      *out += '\'';
    else if (ent.size() > 1 && ent[0] == '#') {
      bool hex = ent[1] == 'x' || ent[1] == 'X';
      char* end = nullptr;
      const char* digits = ent.c_str() + (hex ? 2 : 1);
      unsigned long cp = std::strtoul(digits, &end, hex ? 16 : 10);
      if (end == digits || *end != '\0' || cp == 0 || cp > 0x10ffff) return false;
      if (cp < 0x80) {
        *out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        *out += static_cast<char>(0xc0 | (cp >> 6));
        *out += static_cast<char>(0x80 | (cp & 0x3f));
      } else if (cp < 0x10000) {
        *out += static_cast<char>(0xe0 | (cp >> 12));
        *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        *out += static_cast<char>(0x80 | (cp & 0x3f));
      } else {
        *out += static_cast<char>(0xf0 | (cp >> 18));
        *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        *out += static_cast<char>(0x80 | (cp & 0x3f));
      }
    } else {
      return false;
    }
    i = semi;
  }
  return true;
}

// Skips what may come between elements: text, comments, declarations,
// processing instructions, CDATA. Stops at the next '<' of an element or end tag.
bool skipMisc(Cursor* c, std::string* error) {
  while (!c->atEnd()) {
    if (c->peek() != '<') {
      c->advance();
      continue;
    }
    int line = c->line();
    if (c->startsWith("<!--")) {
      if (!c->skipPast("-->")) return *error = lineError(line, "comment is never closed"), false;
    } else if (c->startsWith("<?")) {
      if (!c->skipPast("?>")) return *error = lineError(line, "<? ... is never closed"), false;
    } else if (c->startsWith("<![CDATA[")) {
      if (!c->skipPast("]]>")) return *error = lineError(line, "CDATA is never closed"), false;
    } else if (c->startsWith("<!")) {
      if (!c->skipDoctype()) return *error = lineError(line, "<!DOCTYPE is never closed"), false;
    } else {
      return true;
    }
  }
  return true;
}

// Reads "<name attr="v" ...>" or "<name .../>"; the cursor is on '<'.
bool readStartTag(Cursor* c, XmlElement* el, bool* selfClosing, std::string* error) {
  el->line = c->line();
  c->advance();  // '<'
  el->name = c->readName();
  if (el->name.empty())
    return *error = lineError(el->line, "'<' is not followed by an element name"), false;
  while (true) {
    c->skipSpace();
    if (c->atEnd()) return *error = lineError(el->line, "<" + el->name + " is never closed"), false;
    if (c->startsWith("/>")) {
      c->advance(2);
      *selfClosing = true;
      return true;
    }
    if (c->peek() == '>') {
      c->advance();
      *selfClosing = false;
      return true;
    }
    std::string key = c->readName();
    if (key.empty()) {
      return *error = lineError(
                 c->line(), "unexpected '" + std::string(1, c->peek()) + "' in <" + el->name + ">"),
             false;
    }
    c->skipSpace();
    if (c->peek() != '=')
      return *error = lineError(c->line(), "attribute " + key + " has no value"), false;
    c->advance();
    c->skipSpace();
    char quote = c->peek();
    if (quote != '"' && quote != '\'') {
      return *error = lineError(c->line(), "value of " + key + " is not quoted"), false;
    }
    c->advance();
    std::string raw;
    while (!c->atEnd() && c->peek() != quote) raw += c->peek(), c->advance();
    if (c->atEnd())
      return *error = lineError(el->line, "value of " + key + " is never closed"), false;
    c->advance();
    std::string value;
    if (!decodeEntities(raw, &value)) {
      return *error = lineError(c->line(), "bad entity reference in " + key + "=\"" + raw + "\""),
             false;
    }
    el->attrs.emplace_back(key, value);
  }
}

}  // namespace

const std::string* XmlElement::attr(const char* key) const {
  for (const auto& kv : attrs) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

std::string XmlElement::attrOr(const char* key, const std::string& fallback) const {
  const std::string* v = attr(key);
  return v ? *v : fallback;
}

bool parseXml(const std::string& text, std::unique_ptr<XmlElement>* root, std::string* error) {
  Cursor c(text);
  std::vector<XmlElement*> open;
  std::unique_ptr<XmlElement> top;
  while (true) {
    if (!skipMisc(&c, error)) return false;
    if (c.atEnd()) break;
    if (c.startsWith("</")) {
      int line = c.line();
      c.advance(2);
      std::string name = c.readName();
      c.skipSpace();
      if (c.peek() != '>')
        return *error = lineError(line, "</" + name + " is not closed by '>'"), false;
      c.advance();
      if (open.empty() || open.back()->name != name) {
        std::string expected = open.empty() ? "no open element" : "</" + open.back()->name + ">";
        return *error = lineError(line, "</" + name + "> does not match " + expected), false;
      }
      open.pop_back();
      continue;
    }
    auto el = std::make_unique<XmlElement>();
    bool selfClosing = false;
    if (!readStartTag(&c, el.get(), &selfClosing, error)) return false;
    XmlElement* raw = el.get();
    if (open.empty()) {
      if (top)
        return *error = lineError(raw->line, "a second top-level element <" + raw->name + ">"),
               false;
      top = std::move(el);
    } else {
      open.back()->children.push_back(std::move(el));
    }
    if (!selfClosing) {
      if (open.size() >= kMaxDepth)
        return *error = lineError(raw->line, "elements nested too deeply"), false;
      open.push_back(raw);
    }
  }
  if (!top) return *error = "no XML element found (empty or not XML)", false;
  if (!open.empty()) {
    return *error = "the file ends inside <" + open.back()->name + "> opened at line " +
                    std::to_string(open.back()->line) + " (truncated?)",
           false;
  }
  *root = std::move(top);
  return true;
}

bool sniffRootElement(const std::string& text, XmlElement* root, std::string* error) {
  Cursor c(text);
  if (!skipMisc(&c, error)) return false;
  if (c.atEnd() || c.startsWith("</"))
    return *error = "no XML element found (empty or not XML)", false;
  bool selfClosing = false;
  return readStartTag(&c, root, &selfClosing, error);
}

}  // namespace weft::topo
