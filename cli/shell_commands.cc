#include "cli/shell_commands.h"

#include <unistd.h>

#include "cli/format.h"
#include "cli/terminal_client.h"

namespace ring::cli {

int OpenShell(CliEnv& env, int64_t id) {
  const TerminalTarget target{env.master.url(), "/api/v1/shells/" + std::to_string(id) + "/terminal",
                              env.master.token(), env.master.ca_file()};
  if (::isatty(0))
    env.err << "Shell " << id << ": Ctrl-] detaches (the shell runs on; ring shell open " << id
            << " comes back)\r\n";
  env.err.flush();
  const TerminalResult result = RunTerminal(target);
  switch (result.end) {
    case TerminalEnd::kDetached:
      env.err << "\r\nDetached from shell " << id << "; it runs on (ring shell kill " << id << " ends it)\n";
      return kExitOk;
    case TerminalEnd::kClosed:
      env.err << "\r\nShell " << id << ": " << result.reason << "\n";
      return kExitOk;
    case TerminalEnd::kFailed:
      break;
  }
  return env.Fail(Unavailable("shell " + std::to_string(id) + ": " + result.reason));
}

int StartShell(CliEnv& env, const TaskRunOptions& options) {
  return StartTask(
      env, "shells", "Shell", options,
      [](const nlohmann::json& shell) { return Field(shell, "state") == "RUNNING"; },
      [&env](int64_t id) { return OpenShell(env, id); });
}

}  // namespace ring::cli
