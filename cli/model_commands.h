#pragma once
// `ring model ...`: the model registry (docs/rest.md "Models"). Named models whose
// versions are registered checkpoints: create, list, describe, archive,
// register-version, delete-version, download, delete.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace CLI {
class App;
}

namespace ring::cli {

// What `ring model ...`'s options are parsed into.
struct ModelArgs {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string label;                  // list --label
  std::string archived;               // list --archived true|false ("" for both)
  std::string uuid;                   // register-version CHECKPOINT_UUID
  std::string version_name;           // register-version --name
  std::string notes;                  // register-version --notes
  std::vector<std::string> metadata;  // register-version --metadata key=value
  int64_t version = 0;                // 0: the latest (download)
  std::string dir;
  bool yes = false;
};

// Adds `ring model` and its subcommands to `app`; the chosen one sets `action`.
void AddModelCommands(CLI::App& app, ModelArgs& a, std::function<int(CliEnv&)>& action);

int CreateModel(CliEnv& env, const ModelArgs& a);
int ListModels(CliEnv& env, const ModelArgs& a);
int DescribeModel(CliEnv& env, const std::string& name);
int SetModelArchived(CliEnv& env, const std::string& name, bool archived);
int RegisterModelVersion(CliEnv& env, const ModelArgs& a);
int DeleteModelVersion(CliEnv& env, const std::string& name, int64_t version);
// Downloads version `a.version` (the latest when 0) into `a.dir`, as `ring
// checkpoint download` does its checkpoint.
int DownloadModel(CliEnv& env, const ModelArgs& a);
int DeleteModel(CliEnv& env, const std::string& name, bool yes);

}  // namespace ring::cli
