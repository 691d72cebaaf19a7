#include "common/yaml_walker.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

namespace ring {
namespace {

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// A misspelling of `known`, not another key: a word that shares most of its
// letters in place. One edit in short keys, two in keys of 6 letters or more;
// the edits must not change which words the key is made of (max_time is not
// a misspelling of max_trials, nor time_metric of metric).
bool NearMiss(const std::string& key, const std::string& known) {
  const size_t limit = std::min(key.size(), known.size()) >= 6 ? 2 : 1;
  if (EditDistance(key, known) > limit) return false;
  const auto words = [](const std::string& s) { return std::count(s.begin(), s.end(), '_'); };
  return words(key) == words(known) || EditDistance(key, known) == 1;
}

bool IsPlainScalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() != "!";
}

// Long values are cut in messages so an error stays one readable line.
std::string Clip(const std::string& s) {
  constexpr size_t kMax = 60;
  return s.size() <= kMax ? s : s.substr(0, kMax) + "...";
}

// Where the key of the empty value `value` is written in `root`. yaml-cpp
// marks "key:" followed by nothing at the token after it (often the next key
// or the end of the file), a line that would mislead. Each collection is
// walked once however many aliases point at it.
std::optional<YAML::Mark> KeyOfEmptyValue(const YAML::Node& root, const YAML::Node& value) {
  std::vector<YAML::Node> pending{root};
  std::set<std::pair<int, int>> walked;  // (position, type) of collections
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (!node.IsMap() && !node.IsSequence()) continue;
    if (!walked.emplace(node.Mark().pos, static_cast<int>(node.Type())).second) continue;
    for (const auto& item : node) {
      if (node.IsSequence()) {
        pending.push_back(item);
        continue;
      }
      if (item.second.is(value)) return item.first.Mark();
      pending.push_back(item.first);
      pending.push_back(item.second);
    }
  }
  return std::nullopt;
}

}  // namespace

int YamlWalker::Line(const YAML::Node& at) const {
  YAML::Mark mark = at.Mark();
  if (at.IsNull() && document_.IsDefined()) {
    if (const auto key = KeyOfEmptyValue(document_, at)) mark = *key;
  }
  return mark.line >= 0 ? mark.line + 1 : 1;
}

void YamlWalker::Fail(const YAML::Node& at, const std::string& message) const {
  throw ConfigError(Line(at), message);
}

void YamlWalker::Error(const YAML::Node& at, const std::string& path, const std::string& message) {
  errors_.push_back({path, Line(at), message});
}

void YamlWalker::Warn(const YAML::Node& at, const std::string& path, const std::string& message) {
  warnings_.push_back({path, Line(at), message});
}

void YamlWalker::Record(const ConfigError& e, const std::string& path) {
  errors_.push_back({path, e.line, e.what()});
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
      return Clip(s);
  }
  return "\"" + Clip(s) + "\"";
}

std::string YamlWalker::Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void YamlWalker::CheckKeys(const YAML::Node& map, const std::string& path,
                           std::initializer_list<const char*> known, const OtherKey& other) {
  RequireMap(map, path);
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      Error(kv.first, path,
            "keys of " + (path.empty() ? "the config" : path) + " must be strings, got " + Show(kv.first));
      continue;
    }
    const std::string key = kv.first.Scalar();
    if (std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      if (!seen.insert(key).second)
        Error(kv.first, Join(path, key), "duplicate key \"" + Join(path, key) + "\"");
      continue;
    }
    if (other && other(kv.first, kv.second, key)) continue;
    std::string message = "unknown key \"" + Join(path, key) + "\"";
    const char* best = nullptr;
    size_t best_distance = SIZE_MAX;
    for (const char* k : known) {
      if (!NearMiss(key, k)) continue;
      if (const size_t d = EditDistance(key, k); d < best_distance) {
        best_distance = d;
        best = k;
      }
    }
    if (best) message += " (did you mean \"" + std::string(best) + "\"?)";
    Error(kv.first, Join(path, key), message);
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

std::vector<std::pair<std::string, YAML::Node>> YamlWalker::Entries(const YAML::Node& map,
                                                                    const std::string& path, int depth) {
  RequireMap(map, path);
  std::vector<std::pair<std::string, YAML::Node>> out;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) Fail(kv.first, "keys of " + path + " must be strings, got " + Show(kv.first));
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) Fail(kv.first, "duplicate key \"" + Join(path, key) + "\"");
    Count(kv.second, Join(path, key), depth + 1);
    out.emplace_back(key, kv.second);
  }
  return out;
}

void YamlWalker::Count(const YAML::Node& node, const std::string& path, int depth) {
  if (depth > kMaxDepth)
    Fail(node, Clip(path) + " is nested too deeply (over " + std::to_string(kMaxDepth) + " levels)");
  if (++values_ > kMaxValues)
    Fail(node, Clip(path) + " makes the config hold over " + std::to_string(kMaxValues) +
                   " keys and values (counting each use of an alias)");
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
      !YAML::convert<double>::decode(node, value) || !std::isfinite(value))
    Fail(node, path + " must be a number, got " + Show(node));
  return value;
}

nlohmann::json YamlWalker::ToJson(const YAML::Node& node, const std::string& path, int depth) {
  Count(node, path, depth);
  if (!node.IsDefined() || node.IsNull()) return nullptr;
  if (node.IsSequence()) {
    auto out = nlohmann::json::array();
    for (size_t i = 0; i < node.size(); ++i)
      out.push_back(ToJson(node[i], path + "[" + std::to_string(i) + "]", depth + 1));
    return out;
  }
  if (node.IsMap()) {
    auto out = nlohmann::json::object();
    for (const auto& [key, value] : Entries(node, path, depth))
      out[key] = ToJson(value, Join(path, key), depth + 1);
    return out;
  }
  if (IsPlainScalar(node)) {
    int64_t i;
    double d;
    bool b;
    if (YAML::convert<int64_t>::decode(node, i)) return i;
    if (YAML::convert<double>::decode(node, d))
      return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(node.Scalar());
    if (YAML::convert<bool>::decode(node, b)) return b;
  }
  return node.Scalar();
}

}  // namespace ring
