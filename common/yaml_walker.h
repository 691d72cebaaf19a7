#pragma once
// Reads YAML nodes into typed values with their dotted path, failing with
// "<file>:<line>: <path> <what>, got <value>". Used by the experiment config
// parser; failures are thrown as ConfigError and turned into a Status at the
// parser's boundary.
//
// YamlWalker owns one parse: it counts the values it has read so that a
// document that explodes through aliases ("billion laughs") or refers to
// itself is refused instead of exhausting memory or the stack. Not shared
// between threads; make one per parse.
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace ring {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
  // How a value reads in an error: "\"ten\"", "-3", "a map", "a list", "nothing".
  static std::string Show(const YAML::Node& node);
  static std::string Join(const std::string& path, const std::string& key);

  // Fails on any key of `map` not in `known` (suggesting the closest one),
  // on keys that are not strings, and on keys given twice.
  void CheckKeys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<const char*> known) const;
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
};

}  // namespace ring
