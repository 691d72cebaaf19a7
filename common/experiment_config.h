#pragma once
// The experiment config (experiment.yaml), parsed into typed structs.
// Every key of the contract is parsed and validated; unknown keys are errors
// that name them. Errors read "experiment.yaml:14: searcher.max_trials must be
// a positive integer, got \"ten\"" (ErrorCode::kInvalidConfig).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/launch_mode.h"
#include "common/status.h"

namespace ring {

// One hyperparameter; `nested` holds the children of a nested map.
struct Hyperparameter {
  enum class Type { kConst, kInt, kDouble, kLog, kCategorical, kNested };
  Type type = Type::kConst;
  nlohmann::json value;  // const: the value (scalar, list or map)
  double minval = 0;     // int, double, log (log: exponent range)
  double maxval = 0;
  double base = 10;                  // log
  std::optional<int64_t> count;      // int, double, log: grid points
  std::vector<nlohmann::json> vals;  // categorical
  std::map<std::string, Hyperparameter> nested;
};

struct SearcherConfig {
  std::string name = "single";  // single | grid | random | adaptive_asha
  std::string metric = "validation_loss";
  bool smaller_is_better = true;
  int64_t max_trials = 1;
  int64_t max_length_batches = 0;     // max_length: {batches: N}
  int64_t max_concurrent_trials = 0;  // 0 = no limit
  std::string mode = "standard";      // aggressive | standard | conservative
  double divisor = 4;
  int64_t max_rungs = 5;
  // Determined 0.38's trial-driven contract (docs/searchers.md): the
  // validation metric that counts training time, and the top rung in its
  // units. Both or neither.
  std::optional<std::string> time_metric;
  int64_t max_time = 0;
};

struct ResourcesConfig {
  int64_t slots_per_trial = 1;
  std::string resource_pool = "default";
  int64_t priority = 42;  // lower number = more important (Determined)
  double weight = 1;
  std::optional<int64_t> max_slots;
  LaunchMode launch = LaunchMode::kAuto;  // resources.launch: auto | per_slot | per_node
};

struct CheckpointStorageConfig {
  std::string type = "shared_fs";
  std::string host_path;
  std::string storage_path;
  // Lines of host_path and storage_path in the YAML (0 when absent), so that
  // the master's check of its allowed roots can name them.
  int host_path_line = 0;
  int storage_path_line = 0;
  int64_t save_experiment_best = 0;
  int64_t save_trial_best = 1;
  int64_t save_trial_latest = 1;
};

struct ExperimentConfig {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string entrypoint;
  std::map<std::string, Hyperparameter> hyperparameters;
  SearcherConfig searcher;
  ResourcesConfig resources;
  int64_t max_restarts = 5;
  int64_t min_validation_period_batches = 0;
  int64_t min_checkpoint_period_batches = 0;
  std::optional<CheckpointStorageConfig> checkpoint_storage;
  std::optional<int64_t> experiment_seed;                    // reproducibility.experiment_seed
  std::map<std::string, std::string> environment_variables;  // environment.variables
  nlohmann::json data = nlohmann::json::object();            // free-form, passed to the trial
  int64_t preemption_timeout_s = 3600;
  // Days the logs of a trial are kept after it ends; -1 forever. Unset: the
  // master's retention.log_retention_days.
  std::optional<int64_t> log_retention_days;
};

// Parses and validates YAML text. `file_name` prefixes error messages
// ("experiment.yaml:14: ..."). All errors carry ErrorCode::kInvalidConfig.
Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text,
                                               const std::string& file_name = "experiment.yaml");

// Hyperparameter values for a trial of the `single` searcher (and the local
// mode of the trial runtime): const values, int/double midpoints rounded
// down for ints, log at the middle exponent, the first categorical value.
nlohmann::json DefaultHparams(const std::map<std::string, Hyperparameter>& space);

}  // namespace ring
