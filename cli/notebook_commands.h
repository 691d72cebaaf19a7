#pragma once
// `ring notebook start|open|list|kill`: Jupyter on the cluster, served to its
// owner through the master's task proxy (docs/interactive.md "Notebooks").
#include <cstdint>

#include "cli/cli_env.h"
#include "cli/task_commands.h"

namespace ring::cli {

// Starts a notebook and, unless detached, waits until its Jupyter answers
// and prints the link that opens it.
int StartNotebook(CliEnv& env, const TaskRunOptions& options);
// Prints a one-time link that opens notebook `id` in a browser (and opens
// it there when this terminal has a desktop browser).
int OpenNotebook(CliEnv& env, int64_t id);

}  // namespace ring::cli
