#pragma once
// Reads YAML nodes into typed values with their dotted path, failing with
// "<file>:<line>: <path> <what>, got <value>". Used by the experiment config
// parser; failures are thrown as ConfigError and turned into a Status at the
// parser's boundary.
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace ring {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class YamlWalker {
 public:
  explicit YamlWalker(std::string file_name) : file_(std::move(file_name)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& message) const;
  // How a value reads in an error: "\"ten\"", "-3", "a map", "a list", "nothing".
  static std::string Show(const YAML::Node& node);
  static std::string Join(const std::string& path, const std::string& key);

  // Fails on any key of `map` not in `known`, suggesting the closest one.
  void CheckKeys(const YAML::Node& map, const std::string& path, std::initializer_list<const char*> known) const;
  void RequireMap(const YAML::Node& node, const std::string& path) const;
  // Fails when `key` is absent from `map` (the line of the map is reported).
  YAML::Node Required(const YAML::Node& map, const std::string& path, const char* key) const;

  std::string String(const YAML::Node& node, const std::string& path, bool non_empty = false) const;
  bool Bool(const YAML::Node& node, const std::string& path) const;
  int64_t Int(const YAML::Node& node, const std::string& path, int64_t min, const char* what) const;
  double Double(const YAML::Node& node, const std::string& path) const;
  // Plain YAML as JSON: ints, floats, bools, strings, lists, maps.
  static nlohmann::json ToJson(const YAML::Node& node);

 private:
  std::string file_;
};

}  // namespace ring
