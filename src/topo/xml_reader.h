// A small XML reader for topology files: elements, attributes and nesting,
// with line numbers for error messages. Comments, the <?xml?> declaration,
// <!DOCTYPE>, CDATA and text are skipped (topology files carry everything in
// attributes). No external dependency; it refuses malformed input with a
// sentence instead of guessing.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace weft::topo {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // entity references decoded
  std::vector<std::unique_ptr<XmlElement>> children;
  int line = 0;

  // nullptr when the attribute is absent.
  const std::string* attr(const char* key) const;
  std::string attrOr(const char* key, const std::string& fallback) const;
};

// Parses a whole document. On failure returns false and sets `error` to a
// sentence with the line number ("line 12: expected '>' after <pci ...").
bool parseXml(const std::string& text, std::unique_ptr<XmlElement>* root, std::string* error);

// Name and attributes of the first element only, without reading the rest:
// enough to tell hwloc XML (<topology>) from an NCCL file (<system>).
bool sniffRootElement(const std::string& text, XmlElement* root, std::string* error);

}  // namespace weft::topo
