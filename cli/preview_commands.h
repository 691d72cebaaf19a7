#pragma once
// `ring preview-search CONFIG`: what a search will run, simulated locally.
#include <cstdint>
#include <optional>
#include <string>

#include "cli/cli_env.h"

namespace ring::cli {

int PreviewSearch(CliEnv& env, const std::string& config_path, std::optional<uint64_t> seed);

}  // namespace ring::cli
