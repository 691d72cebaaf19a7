#pragma once
// The experiment config (experiment.yaml), parsed into typed structs.
//
// The keys follow Determined's experiment config (schemas/expconf/v0 of
// Determined 0.38): each of its keys is supported with Determined's meaning,
// accepted with a warning where ignoring it cannot change what runs, or
// refused with a message naming what to use instead (config_keys.cc holds
// that table). Every problem of a config is reported in one answer, each with
// its key path and YAML line: "experiment.yaml:14: searcher.max_trials must
// be a positive integer, got \"ten\"" (ErrorCode::kInvalidConfig).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/launch_mode.h"
#include "common/log_policy_action.h"
#include "common/status.h"

namespace ring {

// One hyperparameter; `nested` holds the children of a nested map.
struct Hyperparameter {
  enum class Type { kConst, kInt, kDouble, kLog, kCategorical, kNested };
  Type type = Type::kConst;
  nlohmann::json value;  // const: the value (scalar, list, map or null)
  double minval = 0;     // int, double, log (log: exponent range)
  double maxval = 0;
  double base = 10;                  // log
  std::optional<int64_t> count;      // int, double, log: grid points
  std::vector<nlohmann::json> vals;  // categorical
  std::map<std::string, Hyperparameter> nested;
};

// A training length as Determined writes it: a bare integer (in the unit the
// trial chooses, counted as batches here) or {batches|records|epochs: N}.
struct Length {
  enum class Unit { kBatches, kRecords, kEpochs };
  Unit unit = Unit::kBatches;
  int64_t value = 0;
  bool bare = false;  // written as a bare integer
};
const char* ToString(Length::Unit unit);

inline constexpr int64_t kDefaultMaxConcurrentTrials = 16;

struct SearcherConfig {
  std::string name = "single";  // single | grid | random | adaptive_asha
  std::string metric = "validation_loss";
  bool smaller_is_better = true;
  int64_t max_trials = 1;
  // searcher.max_length as written; absent for single, random and grid means
  // the trial decides how long to train (Determined 0.38).
  std::optional<Length> max_length;
  // max_length in batches when it can be counted in batches (batches; records
  // or epochs with records_per_epoch and a const global_batch_size); else 0.
  int64_t max_length_batches = 0;
  // How max_length's unit counts in batches when it is records or epochs:
  // records_per_unit (1, or records_per_epoch) records per unit, batches of
  // global_batch_size; both 0 for batches, a bare integer, or a length that
  // cannot be counted. Searchers plan in the unit (ToBatches of each length).
  int64_t records_per_unit = 0;
  int64_t global_batch_size = 0;
  // 0 = no limit. A config without the key gets Determined's default, 16
  // (kDefaultMaxConcurrentTrials); a struct built in code has no limit.
  int64_t max_concurrent_trials = 0;
  std::string mode = "standard";  // aggressive | standard | conservative
  double divisor = 4;
  int64_t max_rungs = 5;
  // adaptive_asha: the rungs of each bracket, replacing the brackets mode
  // gives; empty: by mode (searcher.stop_once, deprecated, is not kept).
  std::vector<int64_t> bracket_rungs;
  // Determined 0.38's trial-driven contract (docs/searchers.md): the
  // validation metric that counts training time, and the top rung in its
  // units. Both or neither.
  std::optional<std::string> time_metric;
  int64_t max_time = 0;
  // Warm start: every trial starts as if its latest checkpoint were the
  // latest of that trial, or that checkpoint (the master resolves and checks
  // it at submit: master/lifecycle/warm_start.h).
  std::optional<int64_t> source_trial_id;
  std::string source_checkpoint_uuid;
  int source_line = 0;  // the YAML line of whichever of the two is given; 0 when neither
};

struct ResourcesConfig {
  int64_t slots_per_trial = 1;
  std::string resource_pool = "default";
  int64_t priority = 42;  // lower number = more important (Determined)
  double weight = 1;
  std::optional<int64_t> max_slots;
  LaunchMode launch = LaunchMode::kAuto;  // resources.launch: auto | per_slot | per_node
  std::optional<bool> is_single_node;
  int is_single_node_line = 0;  // its YAML line (0 when absent), for the master's submit check
};

struct CheckpointStorageConfig {
  std::string type = "shared_fs";
  // Empty: the master's default storage (a partial override, as Determined
  // merges the experiment's checkpoint_storage with the master's).
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

// Determined's checkpoint_policy: which validations a Trial API checkpoints
// after. Passed to the trial as RING_CHECKPOINT_POLICY.
enum class CheckpointPolicy { kBest, kAll, kNone };
const char* ToString(CheckpointPolicy policy);

// One of log_policies: when a line of a trial's output matches `pattern`.
struct LogPolicy {
  using Action = LogPolicyAction;
  std::string name;
  std::optional<std::string> pattern;  // absent: disables a policy of that name
  Action action = Action::kNone;
  int line = 0;
};

// environment.registry_auth: Determined's (Docker's) credentials for the
// registry of environment.image. Passed to the runtime's pull, never logged.
struct RegistryAuth {
  std::string username;
  std::string password;
  std::string serveraddress;  // the registry; empty: the image's own
  std::string email;
  std::string auth;  // base64 of "username:password"
  std::string identitytoken;
  std::string registrytoken;
};

// One of bind_mounts: a host folder the trial's container sees at
// container_path (docs/containers.md says which host paths are allowed).
struct BindMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
  std::string propagation = "rprivate";
  int line = 0;  // of the entry in the YAML
};

struct EnvironmentConfig {
  // environment.variables and environment.environment_variables (a list of
  // NAME=VALUE), for every trial.
  std::map<std::string, std::string> variables;
  // environment.environment_variables as the {cpu: [...], cuda: [...]} map:
  // added on trials of CPU or of GPU slots (gpu and rocm count as cuda).
  std::map<std::string, std::string> cpu_variables;
  std::map<std::string, std::string> cuda_variables;
  // environment.image: the container image of trials on CPU slots and on GPU
  // slots (a string sets both; gpu and rocm count as cuda). Both empty: the
  // trial runs on the agent's host without a container.
  std::string cpu_image;
  std::string cuda_image;
  int image_line = 0;  // of environment.image in the YAML (0 when absent)
  std::optional<RegistryAuth> registry_auth;
  bool force_pull_image = false;  // pull even when the agent has the image
  bool HasImage() const { return !cpu_image.empty() || !cuda_image.empty(); }
};

struct ExperimentConfig {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  // The project the experiment goes to, by its workspace's name and its own
  // (Determined's keys; both or neither). Empty: the submit's project_id or
  // Uncategorized.
  std::string workspace;
  std::string project;
  // The command: a shell command line, or the list form run without a shell
  // (`entrypoint_argv` non-empty; `entrypoint` then shows it as one line).
  std::string entrypoint;
  std::vector<std::string> entrypoint_argv;
  std::map<std::string, Hyperparameter> hyperparameters;
  SearcherConfig searcher;
  ResourcesConfig resources;
  int64_t max_restarts = 5;
  int64_t records_per_epoch = 0;
  std::optional<Length> min_validation_period;  // as written
  std::optional<Length> min_checkpoint_period;
  int64_t min_validation_period_batches = 0;
  int64_t min_checkpoint_period_batches = 0;
  std::optional<CheckpointStorageConfig> checkpoint_storage;
  CheckpointPolicy checkpoint_policy = CheckpointPolicy::kBest;
  std::optional<int64_t> experiment_seed;  // reproducibility.experiment_seed
  EnvironmentConfig environment;
  std::vector<BindMount> bind_mounts;              // only with environment.image
  nlohmann::json data = nlohmann::json::object();  // free-form, passed to the trial as RING_DATA
  int64_t preemption_timeout_s = 3600;
  // Days the logs of a trial are kept after it ends; -1 forever. Unset: the
  // master's retention.log_retention_days. (retention_policy.log_retention_days)
  std::optional<int64_t> log_retention_days;
  std::vector<LogPolicy> log_policies;
};

// One problem or warning of a config: the dotted key path (empty for the
// whole config), its 1-based line, and the message (which names the path).
struct ConfigIssue {
  std::string path;
  int line = 0;
  std::string message;
  // "experiment.yaml:14: searcher.max_trials must be ..."
  std::string Text(const std::string& file_name) const;
};

// Everything a config check finds: the config when there is no error.
struct ConfigCheck {
  std::optional<ExperimentConfig> config;
  std::vector<ConfigIssue> errors;
  std::vector<ConfigIssue> warnings;
  std::string file_name;
  // The errors, one line each.
  std::string ErrorText() const;
  nlohmann::json IssuesJson(const std::vector<ConfigIssue>& issues) const;
};

// Parses and validates YAML text, collecting every error and warning.
ConfigCheck CheckExperimentConfig(const std::string& yaml_text,
                                  const std::string& file_name = "experiment.yaml");

// Parses and validates YAML text. `file_name` prefixes error messages
// ("experiment.yaml:14: ..."); all errors of the config, one per line, carry
// ErrorCode::kInvalidConfig. Warnings are dropped: use CheckExperimentConfig.
Result<ExperimentConfig> ParseExperimentConfig(const std::string& yaml_text,
                                               const std::string& file_name = "experiment.yaml");

// Hyperparameter values for a trial of the `single` searcher (and the local
// mode of the trial runtime): const values, int/double midpoints rounded
// down for ints, log at the middle exponent, the first categorical value.
nlohmann::json DefaultHparams(const std::map<std::string, Hyperparameter>& space);

}  // namespace ring
