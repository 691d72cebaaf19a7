#pragma once
// `ring agent list`.
#include "cli/cli_env.h"

namespace ring::cli {

int ListAgents(CliEnv& env);

}  // namespace ring::cli
