#pragma once
// `ring experiment set name|description ID VALUE` and `ring experiment label
// add|remove ID LABEL`: how an experiment is named and found, changed after
// submit (PATCH /api/v1/experiments/{id}); `ring experiment delete ID`.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

// `what` is "name" or "description".
int SetExperimentInfo(CliEnv& env, int64_t id, const std::string& what, const std::string& value);
// How long it keeps checkpoints and logs: save-experiment-best,
// save-trial-best, save-trial-latest (N >= 0) or log-retention-days (N,
// forever, or default for the master's).
int SetExperimentRetention(CliEnv& env, int64_t id, const std::string& what, const std::string& value);
// Adds `label` (kept once) or removes it.
int EditExperimentLabel(CliEnv& env, int64_t id, bool add, const std::string& label);
// Deletes an experiment that has ended, with its trials, metrics, logs and
// checkpoint files: asks first on a terminal unless `yes`, then waits until
// it is gone.
int DeleteExperiment(CliEnv& env, int64_t id, bool yes);

}  // namespace ring::cli
