#pragma once
// Reads YAML nodes into typed values with their dotted path, failing with
// "<file>:<line>: <path> <what>, got <value>". Used by the experiment config
// parser: a failure is thrown as ConfigError, which the parser catches per key
// and records (Record) so that one parse reports every problem of a config;
// problems found without stopping (unknown keys) and warnings are recorded
// directly.
//
// YamlWalker owns one parse: it counts the values it has read so that a
// document that explodes through aliases ("billion laughs") or refers to
// itself is refused instead of exhausting memory or the stack. Not shared
// between threads; make one per parse.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "common/experiment_config.h"

namespace ring {

struct ConfigError : std::runtime_error {
  ConfigError(int line, const std::string& message) : std::runtime_error(message), line(line) {}
  int line;  // 1-based
};

class YamlWalker {
 public:
  static constexpr int kMaxDepth = 64;            // nesting of free-form values
  static constexpr int64_t kMaxValues = 100'000;  // keys and values read, expanding aliases

  explicit YamlWalker(std::string file_name) : file_(std::move(file_name)) {}

  // The document being read, so that an error about an empty value can name
  // the line of its key (the parser places an empty value at the next token).
  void set_document(const YAML::Node& root) { document_ = root; }

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& message) const;
  // The 1-based line of `at` (of its key when it is an empty value).
  int Line(const YAML::Node& at) const;
  // Records a problem or a warning about `path` without stopping.
  void Error(const YAML::Node& at, const std::string& path, const std::string& message);
  void Warn(const YAML::Node& at, const std::string& path, const std::string& message);
  // Records a problem thrown while reading `path`.
  void Record(const ConfigError& e, const std::string& path);
  std::vector<ConfigIssue>& errors() { return errors_; }
  std::vector<ConfigIssue>& warnings() { return warnings_; }
  // How a value reads in an error: "\"ten\"", "-3", "a map", "a list", "nothing".
  static std::string Show(const YAML::Node& node);
  static std::string Join(const std::string& path, const std::string& key);

  // Records an error for each key of `map` not in `known` (suggesting the
  // closest one when it is a near miss), each key that is not a string and
  // each key given twice; fails when `map` is not a map.
  // `other`, when given, is asked about each key not in `known` first and
  // returns true when it handled the key itself.
  using OtherKey =
      std::function<bool(const YAML::Node& key, const YAML::Node& value, const std::string& name)>;
  void CheckKeys(const YAML::Node& map, const std::string& path, std::initializer_list<const char*> known,
                 const OtherKey& other = nullptr);
  void RequireMap(const YAML::Node& node, const std::string& path) const;
  // Fails when `key` is absent from `map` (the line of the map is reported).
  YAML::Node Required(const YAML::Node& map, const std::string& path, const char* key) const;
  // The entries of a map with free-form keys, in document order; fails on
  // keys that are not strings, keys given twice, and `depth` over kMaxDepth.
  std::vector<std::pair<std::string, YAML::Node>> Entries(const YAML::Node& map, const std::string& path,
                                                          int depth = 0);

  std::string String(const YAML::Node& node, const std::string& path, bool non_empty = false) const;
  bool Bool(const YAML::Node& node, const std::string& path) const;
  int64_t Int(const YAML::Node& node, const std::string& path, int64_t min, const char* what) const;
  // A finite number (not .nan or .inf).
  double Double(const YAML::Node& node, const std::string& path) const;
  // Plain YAML as JSON: ints, floats, bools, strings, lists, maps.
  nlohmann::json ToJson(const YAML::Node& node, const std::string& path, int depth = 0);

 private:
  // Counts one value read at `path` and fails past kMaxValues or kMaxDepth.
  void Count(const YAML::Node& node, const std::string& path, int depth);

  std::string file_;
  YAML::Node document_;
  int64_t values_ = 0;
  std::vector<ConfigIssue> errors_;
  std::vector<ConfigIssue> warnings_;
};

}  // namespace ring
