#include "cli/config_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/config_overrides.h"
#include "common/experiment_config.h"

namespace ring::cli {
namespace {

// What only the master can tell, named when the check runs offline.
constexpr const char* kMasterOnly[] = {
    "checkpoint_storage: whether host_path is under the master's allowed storage roots",
    "resources.resource_pool: whether the pool exists, may be used by you, and has agents that can run "
    "slots_per_trial",
    "searcher: the master's limits on grid points and trials",
    "environment.image: whether the pool's agents have a container runtime to run it",
};

void PrintIssues(CliEnv& env, const std::string& file, const nlohmann::json& issues, const char* kind) {
  for (const auto& i : issues)
    env.out << file << ":" << i.value("line", 0) << ": " << kind << ": " << i.value("message", "") << '\n';
}

}  // namespace

int CheckConfig(CliEnv& env, const ConfigCheckOptions& options) {
  std::ifstream in(options.config_path, std::ios::binary);
  if (!in) return env.Fail(Status(ErrorCode::kNotFound, "cannot read " + options.config_path));
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ApplyConfigOverrides(text.str(), options.overrides);
  if (!config.ok()) return env.Fail(config.status());
  const std::string file = std::filesystem::path(options.config_path).filename().string();

  nlohmann::json errors, warnings;
  nlohmann::json not_checked = nlohmann::json::array();
  if (options.ask_master) {
    auto answer = env.master.Post("/api/v1/experiments/check", {{"config", *config}});
    if (!answer.ok()) return env.Fail(answer.status());
    errors = answer->value("errors", nlohmann::json::array());
    warnings = answer->value("warnings", nlohmann::json::array());
  } else {
    const ConfigCheck check = CheckExperimentConfig(*config, file);
    errors = check.IssuesJson(check.errors);
    warnings = check.IssuesJson(check.warnings);
    for (const char* what : kMasterOnly) not_checked.push_back(what);
    if (check.config &&
        (check.config->searcher.source_trial_id || !check.config->searcher.source_checkpoint_uuid.empty()))
      not_checked.push_back(
          "searcher.source_trial_id/source_checkpoint_uuid: whether the warm start's source has a completed "
          "checkpoint that you may read");
  }
  if (env.json) {
    env.out << nlohmann::json{{"valid", errors.empty()},
                              {"errors", errors},
                              {"warnings", warnings},
                              {"not_checked", not_checked}}
                   .dump(2)
            << '\n';
  } else {
    PrintIssues(env, file, errors, "error");
    PrintIssues(env, file, warnings, "warning");
    env.out << file << ": " << (errors.empty() ? "valid" : "invalid") << " (" << errors.size() << " error"
            << (errors.size() == 1 ? "" : "s") << ", " << warnings.size() << " warning"
            << (warnings.size() == 1 ? "" : "s") << ")\n";
    if (!not_checked.empty()) {
      env.out << "Not checked offline (give the master with -m URL to check them too):\n";
      for (const auto& what : not_checked) env.out << "  " << what.get<std::string>() << '\n';
    }
  }
  return errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace ring::cli
