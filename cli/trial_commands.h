#pragma once
// `ring trial describe ID` and `ring trial logs ID [-f] [--rank R]`.
#include <cstdint>
#include <optional>

#include "cli/cli_env.h"

namespace ring::cli {

int DescribeTrial(CliEnv& env, int64_t id);

struct LogsOptions {
  bool follow = false;      // keep polling until the trial ended and no new lines arrive
  std::optional<int> rank;  // only this rank's lines
  int64_t page_size = 1000;
};

int TrialLogs(CliEnv& env, int64_t id, const LogsOptions& options);
// Kills one trial; its experiment goes on with the others.
int KillTrial(CliEnv& env, int64_t id);
// POST /trials/{id}/continue: prints the new experiment's id, then follows
// it when asked (exit code as `ring experiment wait`).
int ContinueTrial(CliEnv& env, int64_t id, int64_t length, bool follow, bool paused, bool in_place);

}  // namespace ring::cli
