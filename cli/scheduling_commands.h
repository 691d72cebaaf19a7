#pragma once
// Sharing the pool: `ring job list`, `ring pool list`, `ring experiment set priority|weight|max-slots ID
// VALUE`, `ring agent disable ID [--drain]` and `ring agent enable ID`.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int ListJobs(CliEnv& env);
// Each pool: what runs its work, whose account runs its tasks, its slots and jobs.
int ListPools(CliEnv& env);
// `what` is priority, weight or max-slots; `value` as typed ("none" clears max-slots).
int SetExperimentResource(CliEnv& env, int64_t id, const std::string& what, const std::string& value);
int SetAgentEnabled(CliEnv& env, const std::string& agent_id, bool enabled, bool drain);

}  // namespace ring::cli
