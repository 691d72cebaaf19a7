#pragma once
// `ring shell start|open|list|kill`: a login shell on the cluster, in a
// terminal the master relays (docs/interactive.md "Shells"). Closing the
// terminal (Ctrl-]) leaves the shell running; `kill` ends it.
#include <cstdint>

#include "cli/cli_env.h"
#include "cli/task_commands.h"

namespace ring::cli {

// Starts a shell and, unless detached, waits for it to run and opens it.
int StartShell(CliEnv& env, const TaskRunOptions& options);
// Attaches this terminal to shell `id` until it ends or Ctrl-].
int OpenShell(CliEnv& env, int64_t id);

}  // namespace ring::cli
