#pragma once
// `ring agent list`, `ring agent remove ID`, `ring agent allow-slots ID N`,
// `ring master rotate-cluster-token`.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int ListAgents(CliEnv& env);
// Revokes the agent's credential, closes its connection and ends its work.
int RemoveAgent(CliEnv& env, const std::string& agent_id);
// Lets the agent's hellos offer up to `slots` slots.
int AllowAgentSlots(CliEnv& env, const std::string& agent_id, int64_t slots);
// Writes a new cluster token on the master; prints where (or, with
// `print_token`, the token alone, for scripts).
int RotateClusterToken(CliEnv& env, bool print_token);

}  // namespace ring::cli
