#pragma once
// `ring config check CONFIG`: every error and warning of an experiment config,
// offline (the config alone) or, with the master, also what only the master
// knows (POST /api/v1/experiments/check); or of a command, shell or notebook
// config (Determined's too), by the parser the master uses for them.
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace ring::cli {

// What CONFIG is for. kAuto: a task config when it has no searcher and
// parses as one or has a key only task configs have (idle_timeout,
// notebook_idle_type, work_dir), else an experiment config.
enum class ConfigKind { kAuto, kExperiment, kTask };

struct ConfigCheckOptions {
  std::string config_path;
  ConfigKind kind = ConfigKind::kAuto;
  bool ask_master = false;             // -m/--master or RING_MASTER given
  std::vector<std::string> overrides;  // --config key=value
};

int CheckConfig(CliEnv& env, const ConfigCheckOptions& options);

}  // namespace ring::cli
