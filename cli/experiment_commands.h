#pragma once
// `ring experiment create|list|describe|pause|activate|kill|archive|unarchive`.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

constexpr uint64_t kDefaultMaxModelSize = 64ull << 20;

struct CreateOptions {
  std::string config_path;
  std::string model_dir;
  bool follow = false;
  bool paused = false;
  // --launch per-node|per-slot: written into the submitted config's
  // resources.launch (the file itself is not changed).
  std::string launch;
  uint64_t max_model_size = kDefaultMaxModelSize;
  std::vector<std::string> overrides;  // --config key=value, applied in order
  // --test: run one short trial of the config (cli/config_overrides.h
  // TestModeConfig), stop it after its first validation, exit 0 if it got there.
  bool test = false;
  std::string template_name;  // --template: the config is laid over this stored template
  std::string project;        // --project: id or WORKSPACE/PROJECT ("": the default project)
};

int CreateExperiment(CliEnv& env, const CreateOptions& options);
// `ring experiment fork ID`: a new experiment with the parent's model
// definition and its config (or --config-file's), the --config overrides
// applied; --follow and --paused as for create.
int ForkExperiment(CliEnv& env, int64_t parent, const CreateOptions& options);
// The config text with resources.launch set to `launch` (per-node, per_node,
// per-slot, per_slot or auto); kInvalidArgument naming --launch otherwise.
Result<std::string> WithLaunchMode(const std::string& config_yaml, const std::string& launch);
// `ring experiment list`'s filters and order (the API's query parameters).
struct ExperimentListOptions {
  int64_t limit = 100;
  int64_t offset = 0;
  std::vector<std::string> states;  // ACTIVE, COMPLETED, ...
  std::string owner;
  std::string label;
  std::string name;      // a part of the name, any case
  std::string archived;  // "", "true", "false"
  std::string sort;      // id, name, state, owner, progress, best_validation, num_trials, created_at
  bool descending = false;
  std::string project;    // --project: id or WORKSPACE/PROJECT
  std::string workspace;  // --workspace: id or name
};
int ListExperiments(CliEnv& env, const ExperimentListOptions& options);
int DescribeExperiment(CliEnv& env, int64_t id);
// POST /api/v1/experiments/{id}/{action}; action is pause|activate|kill|archive|unarchive.
int ExperimentAction(CliEnv& env, int64_t id, const std::string& action);

}  // namespace ring::cli
