// The first line of a small text file (/proc and /sys values), without its
// newline; "" when the file is missing or empty. Callers treat "" as unknown.
#pragma once

#include <fstream>
#include <string>

namespace weft {

inline std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

}  // namespace weft
