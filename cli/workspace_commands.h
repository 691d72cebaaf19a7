#pragma once
// `ring workspace ...` and `ring project ...` (docs/rest.md "Workspaces and
// projects"), `ring experiment move`, and naming a workspace or project on
// the command line: a workspace by id or name, a project by id or
// WORKSPACE/PROJECT.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cli/cli_env.h"

namespace CLI {
class App;
}

namespace ring::cli {

struct WorkspaceArgs {
  std::string workspace;  // id or name
  std::string project;    // id or WORKSPACE/PROJECT
  std::string name;
  std::string description;
  std::string username;
  std::string role = "MEMBER";
  std::string pool;
  bool is_default = false;
  std::string archived;  // list --archived true|false
  int64_t experiment = 0;
  std::optional<std::string> new_name;         // edit --name
  std::optional<std::string> new_description;  // edit --description
};

// Adds `ring workspace` and `ring project` to `app`, and `move` to
// `experiment`; the chosen command sets `action`.
void AddWorkspaceCommands(CLI::App& app, CLI::App& experiment, WorkspaceArgs& a,
                          std::function<int(CliEnv&)>& action);

// The id of the workspace `text` names (an id or a name).
Result<int64_t> ResolveWorkspace(CliEnv& env, const std::string& text);
// The id of the project `text` names (an id or WORKSPACE/PROJECT).
Result<int64_t> ResolveProject(CliEnv& env, const std::string& text);

}  // namespace ring::cli
