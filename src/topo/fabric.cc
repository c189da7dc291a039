// Reading a fabric description (see fabric.h). Unknown keys are refused, not
// ignored: a misspelt "uplink_gbt" would otherwise silently model a
// non-blocking fabric.
#include "topo/fabric.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "base/config.h"
#include "base/error.h"
#include "bootstrap/wire.h"
#include "topo/json_reader.h"

namespace weft {
namespace topo {
namespace {

bool onlyKeys(const JsonValue& obj, const std::set<std::string>& allowed, const std::string& where,
              std::string* why) {
  for (const auto& kv : obj.keys) {
    if (allowed.count(kv.first)) continue;
    std::string list;
    for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
    *why = where + ": unknown key \"" + kv.first + "\" (known: " + list + ")";
    return false;
  }
  return true;
}

bool positive(const JsonValue* v, const std::string& what, bool required, double* out,
              std::string* why) {
  if (v == nullptr) {
    if (required) *why = what + " is missing";
    return !required;
  }
  if (v->kind != JsonValue::Kind::kNumber || !(v->number > 0)) {
    *why = what + " must be a positive number";
    return false;
  }
  *out = v->number;
  return true;
}

bool readPods(const JsonValue& root, Fabric* f, std::string* why) {
  const JsonValue* pods = root.find("pods");
  if (pods == nullptr) {
    f->pods.push_back(FabricPod{"", 0});  // one pod: the whole fabric
    return true;
  }
  if (pods->kind != JsonValue::Kind::kArray || pods->items.empty()) {
    *why = "\"pods\" must be a non-empty array";
    return false;
  }
  for (size_t i = 0; i < pods->items.size(); ++i) {
    const JsonValue& p = pods->items[i];
    std::string where = "pods[" + std::to_string(i) + "]";
    if (p.kind != JsonValue::Kind::kObject) {
      *why = where + " must be an object";
      return false;
    }
    if (!onlyKeys(p, {"name", "uplink_gbit"}, where, why)) return false;
    const JsonValue* name = p.find("name");
    if (name == nullptr || name->kind != JsonValue::Kind::kString || name->text.empty()) {
      *why = where + ".name must be a non-empty string";
      return false;
    }
    FabricPod pod{name->text, 0};
    if (!positive(p.find("uplink_gbit"), where + ".uplink_gbit", false, &pod.uplinkGbit, why))
      return false;
    for (const FabricPod& other : f->pods)
      if (other.name == pod.name) {
        *why = "pod \"" + pod.name + "\" is listed twice";
        return false;
      }
    f->pods.push_back(pod);
  }
  return true;
}

bool readLeaf(const JsonValue& l, const std::string& where, bool namedPods, Fabric* f,
              std::set<std::string>* seen, std::string* why) {
  if (l.kind != JsonValue::Kind::kObject) {
    *why = where + " must be an object";
    return false;
  }
  if (!onlyKeys(l, {"name", "pod", "uplink_gbit", "oversubscription", "nodes"}, where, why))
    return false;
  FabricLeaf leaf;
  const JsonValue* name = l.find("name");
  leaf.name = name != nullptr && name->kind == JsonValue::Kind::kString ? name->text : where;
  const JsonValue* pod = l.find("pod");
  if (namedPods) {
    if (pod == nullptr || pod->kind != JsonValue::Kind::kString) {
      *why = where + ".pod must name one of \"pods\"";
      return false;
    }
    leaf.pod = -1;
    for (size_t p = 0; p < f->pods.size(); ++p)
      if (f->pods[p].name == pod->text) leaf.pod = static_cast<int>(p);
    if (leaf.pod < 0) {
      *why = where + ".pod \"" + pod->text + "\" is not in \"pods\"";
      return false;
    }
  } else if (pod != nullptr) {
    *why = where + ".pod is given but there is no \"pods\" list";
    return false;
  }
  const JsonValue* nodes = l.find("nodes");
  if (nodes == nullptr || nodes->kind != JsonValue::Kind::kArray || nodes->items.empty()) {
    *why = where + ".nodes must be a non-empty array of node names";
    return false;
  }
  for (const JsonValue& n : nodes->items) {
    if (n.kind != JsonValue::Kind::kString || n.text.empty()) {
      *why = where + ".nodes must hold non-empty strings";
      return false;
    }
    if (!seen->insert(n.text).second) {
      *why = "node \"" + n.text + "\" is listed under two leaves (or twice)";
      return false;
    }
    leaf.nodes.push_back(n.text);
  }
  double over = 0;
  if (!positive(l.find("uplink_gbit"), where + ".uplink_gbit", false, &leaf.uplinkGbit, why) ||
      !positive(l.find("oversubscription"), where + ".oversubscription", false, &over, why))
    return false;
  if (over > 0 && leaf.uplinkGbit > 0) {
    *why = where + ": give uplink_gbit or oversubscription, not both";
    return false;
  }
  if (over > 0) leaf.uplinkGbit = leaf.nodes.size() * f->nodeGbit / over;
  f->leaves.push_back(leaf);
  return true;
}

uint64_t textHash(const std::string& text) { return fnv1a(text.data(), text.size()); }

}  // namespace

int Fabric::findLeaf(const std::vector<std::string>& names) const {
  for (size_t l = 0; l < leaves.size(); ++l)
    for (const std::string& node : leaves[l].nodes)
      for (const std::string& name : names)
        if (node == name) return static_cast<int>(l);
  return -1;
}

double Fabric::leafOversubscription(int l) const {
  const FabricLeaf& leaf = leaves[l];
  if (leaf.uplinkGbit <= 0) return 1;
  return leaf.nodes.size() * nodeGbit / leaf.uplinkGbit;
}

std::string Fabric::summary() const {
  double worst = 1;
  for (size_t l = 0; l < leaves.size(); ++l)
    worst = std::max(worst, leafOversubscription(static_cast<int>(l)));
  char text[200];
  std::snprintf(text, sizeof(text),
                "%zu leaves in %zu pod(s), %s %.3g Gbit/s, leaf uplinks up to %.2g:1 "
                "oversubscribed%s",
                leaves.size(), pods.size(), rails > 1 ? "NIC links" : "node links", nodeGbit, worst,
                rails > 1 ? (", " + std::to_string(rails) + " rails").c_str() : "");
  return text;
}

bool parseFabric(const std::string& text, Fabric* out, std::string* why) {
  *out = Fabric();
  JsonValue root;
  if (!parseJson(text, &root, why)) return false;
  if (root.kind != JsonValue::Kind::kObject) {
    *why = std::string("the description must be an object, not ") + root.kindName();
    return false;
  }
  if (!onlyKeys(root, {"node_gbit", "rails", "hop_latency_us", "pods", "leaves"}, "the description",
                why))
    return false;
  if (!positive(root.find("node_gbit"), "node_gbit", true, &out->nodeGbit, why)) return false;
  double rails = 1;
  if (!positive(root.find("rails"), "rails", false, &rails, why)) return false;
  if (rails > 64 || rails != std::floor(rails)) {
    *why = "rails must be a whole number from 1 to 64";
    return false;
  }
  out->rails = static_cast<int>(rails);
  if (const JsonValue* hop = root.find("hop_latency_us")) {
    if (hop->kind != JsonValue::Kind::kObject ||
        !onlyKeys(*hop, {"leaf", "spine", "core"}, "hop_latency_us", why)) {
      if (why->empty()) *why = "hop_latency_us must be an object";
      return false;
    }
    if (!positive(hop->find("leaf"), "hop_latency_us.leaf", false, &out->leafHopUs, why) ||
        !positive(hop->find("spine"), "hop_latency_us.spine", false, &out->spineHopUs, why) ||
        !positive(hop->find("core"), "hop_latency_us.core", false, &out->coreHopUs, why))
      return false;
  }
  if (!readPods(root, out, why)) return false;
  const JsonValue* leaves = root.find("leaves");
  if (leaves == nullptr || leaves->kind != JsonValue::Kind::kArray || leaves->items.empty()) {
    *why = "\"leaves\" must be a non-empty array";
    return false;
  }
  std::set<std::string> seen;
  const bool namedPods = root.find("pods") != nullptr;
  for (size_t i = 0; i < leaves->items.size(); ++i)
    if (!readLeaf(leaves->items[i], "leaves[" + std::to_string(i) + "]", namedPods, out, &seen,
                  why))
      return false;
  out->hash = textHash(text);
  return true;
}

weftResult_t loadFabric(const std::string& path, Fabric* out) {
  std::ifstream in(path);
  if (!in) return setError(weftInvalidArgument, "WEFT_FABRIC=%s: cannot open it", path.c_str());
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  const std::string body = text.str();
  const size_t first = body.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && body[first] == '{';
  if (!(json ? parseFabric(body, out, &why) : parseSlurmTopology(body, out, &why)))
    return setError(weftInvalidArgument, "WEFT_FABRIC=%s: %s", path.c_str(), why.c_str());
  out->hash = textHash(body);
  return weftSuccess;
}

std::vector<std::string> fabricNamesOfThisNode(const std::string& address) {
  if (configIsSet("WEFT_FABRIC_NODE") && !configString("WEFT_FABRIC_NODE").empty())
    return {configString("WEFT_FABRIC_NODE")};
  std::vector<std::string> names;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
    names.push_back(host);
    std::string shortName(host);
    shortName = shortName.substr(0, shortName.find('.'));
    if (shortName != names[0]) names.push_back(shortName);
  }
  if (!address.empty()) names.push_back(address);
  return names;
}

}  // namespace topo
}  // namespace weft
