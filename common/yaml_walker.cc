#include "common/yaml_walker.h"

#include <algorithm>
#include <vector>

namespace ring {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool IsPlainScalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() != "!";
}

}  // namespace

void YamlWalker::Fail(const YAML::Node& at, const std::string& message) const {
  const int line = at.Mark().line >= 0 ? at.Mark().line + 1 : 1;
  throw ConfigError(file_ + ":" + std::to_string(line) + ": " + message);
}

std::string YamlWalker::Show(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  const std::string& s = node.Scalar();
  if (IsPlainScalar(node)) {
    int64_t i;
    double d;
    bool b;
    if (YAML::convert<int64_t>::decode(node, i) || YAML::convert<double>::decode(node, d) ||
        YAML::convert<bool>::decode(node, b))
      return s;
  }
  return "\"" + s + "\"";
}

std::string YamlWalker::Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void YamlWalker::CheckKeys(const YAML::Node& map, const std::string& path,
                           std::initializer_list<const char*> known) const {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar())
      Fail(kv.first, "keys of " + (path.empty() ? "the config" : path) + " must be strings");
    const std::string key = kv.first.Scalar();
    if (std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) continue;
    std::string message = "unknown key \"" + Join(path, key) + "\"";
    const char* best = nullptr;
    size_t best_distance = std::max<size_t>(2, key.size() / 2) + 1;  // suggest only near misses
    for (const char* k : known) {
      size_t d = EditDistance(key, k);
      if (d < best_distance) {
        best_distance = d;
        best = k;
      }
    }
    if (best) message += " (did you mean \"" + std::string(best) + "\"?)";
    Fail(kv.first, message);
  }
}

void YamlWalker::RequireMap(const YAML::Node& node, const std::string& path) const {
  if (!node.IsMap()) Fail(node, path + " must be a map, got " + Show(node));
}

YAML::Node YamlWalker::Required(const YAML::Node& map, const std::string& path, const char* key) const {
  YAML::Node value = map[key];
  if (!value.IsDefined() || value.IsNull()) {
    if (value.IsDefined()) Fail(value, Join(path, key) + " is required");
    Fail(map, Join(path, key) + " is required");
  }
  return value;
}

std::string YamlWalker::String(const YAML::Node& node, const std::string& path, bool non_empty) const {
  if (!node.IsScalar() || node.IsNull()) Fail(node, path + " must be a string, got " + Show(node));
  if (non_empty && node.Scalar().empty()) Fail(node, path + " must not be empty");
  return node.Scalar();
}

bool YamlWalker::Bool(const YAML::Node& node, const std::string& path) const {
  bool value = false;
  if (!IsPlainScalar(node) || !YAML::convert<bool>::decode(node, value))
    Fail(node, path + " must be true or false, got " + Show(node));
  return value;
}

int64_t YamlWalker::Int(const YAML::Node& node, const std::string& path, int64_t min,
                        const char* what) const {
  int64_t value = 0;
  if (!IsPlainScalar(node) || !YAML::convert<int64_t>::decode(node, value) || value < min)
    Fail(node, path + " must be " + what + ", got " + Show(node));
  return value;
}

double YamlWalker::Double(const YAML::Node& node, const std::string& path) const {
  double value = 0;
  bool b;
  if (!IsPlainScalar(node) || YAML::convert<bool>::decode(node, b) ||
      !YAML::convert<double>::decode(node, value))
    Fail(node, path + " must be a number, got " + Show(node));
  return value;
}

nlohmann::json YamlWalker::ToJson(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return nullptr;
  if (node.IsSequence()) {
    auto out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(ToJson(item));
    return out;
  }
  if (node.IsMap()) {
    auto out = nlohmann::json::object();
    for (const auto& kv : node) out[kv.first.Scalar()] = ToJson(kv.second);
    return out;
  }
  if (IsPlainScalar(node)) {
    int64_t i;
    double d;
    bool b;
    if (YAML::convert<int64_t>::decode(node, i)) return i;
    if (YAML::convert<double>::decode(node, d)) return d;
    if (YAML::convert<bool>::decode(node, b)) return b;
  }
  return node.Scalar();
}

}  // namespace ring
