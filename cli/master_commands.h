#pragma once
// `ring master info`: the master's version, uptime, database and counts.
#include "cli/cli_env.h"

namespace ring::cli {

int MasterInfo(CliEnv& env);

}  // namespace ring::cli
