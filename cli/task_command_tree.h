#pragma once
// `ring cmd|shell|notebook ...`: the commands that start, open, follow, list
// and kill tasks on the cluster (docs/interactive.md).
#include <cstdint>
#include <functional>

#include <CLI/CLI.hpp>

#include "cli/cli_env.h"
#include "cli/task_commands.h"

namespace ring::cli {

struct TaskArgs {
  TaskRunOptions run;
  int64_t slots = -1;     // -1: not given
  int64_t priority = -1;  // -1: not given
  std::string pool;
  int64_t id = 0;
  bool follow = false;
};

// Adds `ring cmd`, `ring shell` and `ring notebook` to `app`; the chosen
// command sets `action`.
void AddTaskCommands(CLI::App& app, TaskArgs& a, std::function<int(CliEnv&)>& action);

}  // namespace ring::cli
