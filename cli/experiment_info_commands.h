#pragma once
// `ring experiment set name|description ID VALUE` and `ring experiment label
// add|remove ID LABEL`: how an experiment is named and found, changed after
// submit (PATCH /api/v1/experiments/{id}).
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

// `what` is "name" or "description".
int SetExperimentInfo(CliEnv& env, int64_t id, const std::string& what, const std::string& value);
// Adds `label` (kept once) or removes it.
int EditExperimentLabel(CliEnv& env, int64_t id, bool add, const std::string& label);

}  // namespace ring::cli
