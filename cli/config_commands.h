#pragma once
// `ring config check CONFIG`: every error and warning of an experiment config,
// offline (the config alone) or, with the master, also what only the master
// knows (POST /api/v1/experiments/check).
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace ring::cli {

struct ConfigCheckOptions {
  std::string config_path;
  bool ask_master = false;             // -m/--master or RING_MASTER given
  std::vector<std::string> overrides;  // --config key=value
};

int CheckConfig(CliEnv& env, const ConfigCheckOptions& options);

}  // namespace ring::cli
