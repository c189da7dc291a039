// A fabric from Slurm's topology.conf (topology/tree plugin): a switch with
// Nodes= is a leaf; the switch that lists a leaf in its Switches= is its pod
// (leaves with no parent share one pod). The file has no link rates, so the
// result orders nodes leaf by leaf without modelling uplinks (every uplink
// unlimited, node_gbit 1); a JSON description adds rates (docs/scale.md).
#include <cctype>
#include <map>
#include <sstream>

#include "topo/fabric.h"

namespace weft {
namespace topo {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Slurm's hostlist: "tux[0-3,07],gpu5" -> tux0 tux1 tux2 tux3 tux07 gpu5
// (a range keeps the width of its first bound: [01-03] -> 01 02 03).
bool expandHostlist(const std::string& text, std::vector<std::string>* out, std::string* why) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    int depth = 0;
    while (end < text.size() && (depth > 0 || text[end] != ',')) {
      depth += text[end] == '[' ? 1 : text[end] == ']' ? -1 : 0;
      ++end;
    }
    const std::string item = text.substr(i, end - i);
    i = end + 1;
    const size_t open = item.find('['), close = item.find(']');
    if (open == std::string::npos) {
      if (!item.empty()) out->push_back(item);
      continue;
    }
    if (close == std::string::npos || close < open) {
      *why = "malformed host list \"" + item + "\"";
      return false;
    }
    const std::string head = item.substr(0, open), tail = item.substr(close + 1);
    std::stringstream ranges(item.substr(open + 1, close - open - 1));
    std::string range;
    while (std::getline(ranges, range, ',')) {
      const size_t dash = range.find('-');
      const std::string a = range.substr(0, dash),
                        b = dash == std::string::npos ? a : range.substr(dash + 1);
      if (a.empty() || b.empty() || a.find_first_not_of("0123456789") != std::string::npos ||
          b.find_first_not_of("0123456789") != std::string::npos || std::stol(b) < std::stol(a) ||
          std::stol(b) - std::stol(a) > 1000000) {
        *why = "malformed range \"" + range + "\" in \"" + item + "\"";
        return false;
      }
      for (long v = std::stol(a); v <= std::stol(b); ++v) {
        std::string num = std::to_string(v);
        if (num.size() < a.size()) num = std::string(a.size() - num.size(), '0') + num;
        out->push_back(head + num + tail);
      }
    }
  }
  return true;
}

}  // namespace

bool parseSlurmTopology(const std::string& text, Fabric* out, std::string* why) {
  *out = Fabric();
  std::map<std::string, std::string> parentOf;  // switch -> the switch listing it
  std::vector<std::pair<std::string, std::vector<std::string>>> leaves;
  std::stringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    line = line.substr(0, line.find('#'));
    std::stringstream words(line);
    std::string word, name, nodes, switches;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = lower(word.substr(0, eq));
      const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (key == "switchname") name = value;
      if (key == "nodes") nodes = value;
      if (key == "switches") switches = value;
    }
    if (name.empty()) continue;
    std::vector<std::string> list;
    if (!expandHostlist(nodes.empty() ? switches : nodes, &list, why)) {
      *why = "line " + std::to_string(number) + ": " + *why;
      return false;
    }
    if (!nodes.empty())
      leaves.push_back({name, list});
    else
      for (const std::string& child : list) parentOf[child] = name;
  }
  if (leaves.empty()) {
    *why = "no switch with Nodes= (not a Slurm topology.conf?)";
    return false;
  }
  out->nodeGbit = 1;
  std::map<std::string, int> podIndex;
  for (const auto& leaf : leaves) {
    auto it = parentOf.find(leaf.first);
    const std::string pod = it == parentOf.end() ? "" : it->second;
    if (!podIndex.count(pod)) {
      podIndex[pod] = static_cast<int>(out->pods.size());
      out->pods.push_back(FabricPod{pod, 0});
    }
    out->leaves.push_back(FabricLeaf{leaf.first, podIndex[pod], 0, leaf.second});
  }
  return true;
}

}  // namespace topo
}  // namespace weft
