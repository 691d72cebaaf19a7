#pragma once
// `ring checkpoint list EXP_ID` and `ring checkpoint download UUID DIR`.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int ListCheckpoints(CliEnv& env, int64_t experiment_id);
int DownloadCheckpoint(CliEnv& env, const std::string& uuid, const std::string& dir);

}  // namespace ring::cli
