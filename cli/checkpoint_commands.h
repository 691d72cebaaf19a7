#pragma once
// `ring checkpoint list EXP_ID`, `ring checkpoint download UUID DIR` and
// `ring experiment download-model-def ID DIR`: downloads unpacked into a folder.
#include <cstdint>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int ListCheckpoints(CliEnv& env, int64_t experiment_id);
int DownloadCheckpoint(CliEnv& env, const std::string& uuid, const std::string& dir);
int DownloadModelDefinition(CliEnv& env, int64_t experiment_id, const std::string& dir);

}  // namespace ring::cli
