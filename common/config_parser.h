#pragma once
// ConfigParser turns one YAML document into an ExperimentConfig, section by
// section (config_parser.cc: the top level; config_hparams.cc,
// config_searcher.cc, config_resources.cc, config_storage.cc: one section
// each). Each key is read inside Try, so a problem is recorded and the parse
// goes on to the next key: one parse reports every problem of a config. Owns
// the walker of that one parse; runs on the caller's thread and is thrown
// away afterwards. Private to ring_common.
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/experiment_config.h"
#include "common/task_config.h"
#include "common/yaml_walker.h"

namespace ring {

// A key that is there with a value (Determined writes null for "the default").
inline bool Present(const YAML::Node& v) {
  return v && !v.IsNull();
}

class ConfigParser {
 public:
  explicit ConfigParser(const std::string& file) : w_(file) {}

  ExperimentConfig Parse(const YAML::Node& root);
  // A task's config (config_task.cc): Determined's command config keys.
  TaskSpec ParseTask(const YAML::Node& root);
  YamlWalker& walker() { return w_; }

 private:
  // Runs `read`, recording a ConfigError it throws against `path`.
  template <class F>
  void Try(const std::string& path, F&& read) {
    try {
      read();
    } catch (const ConfigError& e) {
      w_.Record(e, path);
    } catch (const YAML::Exception& e) {
      w_.Record(ConfigError(e.mark.line + 1, path + ": " + e.msg), path);
    }
  }

  // Keys of Determined's schema that Ringmaster does not run: each is
  // refused (with what to use instead) or warned about, by the table in
  // config_keys.cc. Returns true when `key` of `path` was such a key.
  bool DeterminedOnlyKey(const YAML::Node& key_node, const YAML::Node& value, const std::string& path,
                         const std::string& key);
  // CheckKeys with the table of Determined-only keys of `path`.
  void Keys(const YAML::Node& map, const std::string& path, std::initializer_list<const char*> known) {
    w_.CheckKeys(map, path, known, [&](const YAML::Node& k, const YAML::Node& v, const std::string& name) {
      return DeterminedOnlyKey(k, v, path, name);
    });
  }

  Hyperparameter ParseHparam(const YAML::Node& node, const std::string& path, int depth);
  // The grid searcher needs `count` on every int, double and log hyperparameter.
  void RequireGridCount(const YAML::Node& node, const std::string& path, const Hyperparameter& h);
  void ParseSearcher(const YAML::Node& node, ExperimentConfig& c);
  void ParseResources(const YAML::Node& node, ResourcesConfig& r);
  void ParseEnvironment(const YAML::Node& node, EnvironmentConfig& out);
  void ParseVariables(const YAML::Node& vars, const std::string& path,
                      std::map<std::string, std::string>& out);
  // environment.image, registry_auth, force_pull_image (config_container.cc).
  void ParseImage(const YAML::Node& node, EnvironmentConfig& out);
  void ParseRegistryAuth(const YAML::Node& node, EnvironmentConfig& out);
  void ParseBindMounts(const YAML::Node& node, std::vector<BindMount>& out);
  void ParseEntrypoint(const YAML::Node& node, ExperimentConfig& c);
  CheckpointStorageConfig ParseCheckpointStorage(const YAML::Node& node);
  void ParseLogPolicies(const YAML::Node& node, std::vector<LogPolicy>& out);
  // A Determined length: a bare integer or {batches|records|epochs: N}.
  Length ParseLength(const YAML::Node& node, const std::string& path, int64_t min);
  void CountMaxLength(const YAML::Node& node, ExperimentConfig& c);
  // `length` in batches, or nullopt when records_per_epoch or a const
  // global_batch_size it needs is missing (`why` says which).
  static std::optional<int64_t> ToBatches(const Length& length, const ExperimentConfig& c, std::string* why);

  YamlWalker w_;
};

}  // namespace ring
