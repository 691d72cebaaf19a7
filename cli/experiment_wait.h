#pragma once
// `ring experiment wait ID` and the follow loop of `create --follow` and
// `describe --follow`: polls the experiment and its trials, prints state
// changes (and with show_metrics each trial's latest metrics), and returns
// 0 only when the experiment ends COMPLETED. Tolerates the master being
// unreachable for CliEnv::unreachable_grace (a master restart).
#include <chrono>
#include <cstdint>
#include <optional>

#include "cli/cli_env.h"

namespace ring::cli {

struct WaitOptions {
  std::optional<std::chrono::seconds> timeout;  // none: wait until the experiment ends
  bool show_metrics = false;                    // print latest metrics as trials progress
  bool print_final_json = true;                 // with --json, print the final experiment
};

int WaitForExperiment(CliEnv& env, int64_t experiment_id, const WaitOptions& options);

}  // namespace ring::cli
