#include "cli/config_commands.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cli/config_overrides.h"
#include "common/experiment_config.h"
#include "common/task_config.h"

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

// The same for a command, shell or notebook config.
constexpr const char* kMasterOnlyForTasks[] = {
    "resources.resource_pool: whether the pool exists, may be used by you, and has room for the slots",
};

// What the YAML's top-level keys say it is: every experiment config names a
// searcher, no task config does, and some keys only a task config has.
// Unparsable text is left to the experiment check.
struct TopKeys {
  bool searcher = true;
  bool task_only = false;
};

TopKeys ReadTopKeys(const std::string& text) {
  TopKeys keys;
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return keys;
    keys.searcher = static_cast<bool>(root["searcher"]);
    for (const char* key : {"idle_timeout", "notebook_idle_type", "work_dir"})
      keys.task_only = keys.task_only || static_cast<bool>(root[key]);
  } catch (const YAML::Exception&) {
  }
  return keys;
}

// ParseTaskConfig's refusal, one problem a line ("<file>:<line>: <message>"),
// as issues like an experiment check's.
nlohmann::json TaskIssues(const Status& refusal, const std::string& file) {
  nlohmann::json issues = nlohmann::json::array();
  std::istringstream lines(refusal.message());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    nlohmann::json issue{{"message", line}};
    if (line.rfind(file + ":", 0) == 0) {
      const std::string rest = line.substr(file.size() + 1);
      const size_t colon = rest.find(':');
      if (colon != std::string::npos && colon > 0 && rest.find_first_not_of("0123456789") == colon) {
        issue["line"] = std::stoi(rest.substr(0, colon));
        issue["message"] = rest.substr(colon + 1 + (rest.size() > colon + 1 && rest[colon + 1] == ' '));
      }
    }
    issues.push_back(std::move(issue));
  }
  return issues;
}

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
  bool task = options.kind == ConfigKind::kTask;
  std::optional<Status> task_refusal;
  if (options.kind != ConfigKind::kExperiment) {
    auto parsed = ParseTaskConfig(*config, file);
    if (!parsed.ok()) task_refusal = parsed.status();
    const TopKeys keys = ReadTopKeys(*config);
    task = task || (options.kind == ConfigKind::kAuto && !keys.searcher && (parsed.ok() || keys.task_only));
  }
  if (task) {
    // The master parses a task's config with the same code when it starts it.
    errors = task_refusal ? TaskIssues(*task_refusal, file) : nlohmann::json::array();
    warnings = nlohmann::json::array();
    if (!options.ask_master)
      for (const char* what : kMasterOnlyForTasks) not_checked.push_back(what);
  } else if (options.ask_master) {
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
    env.out << nlohmann::json{{"kind", task ? "task" : "experiment"},
                              {"valid", errors.empty()},
                              {"errors", errors},
                              {"warnings", warnings},
                              {"not_checked", not_checked}}
                   .dump(2)
            << '\n';
  } else {
    PrintIssues(env, file, errors, "error");
    PrintIssues(env, file, warnings, "warning");
    env.out << file << ": " << (errors.empty() ? "valid" : "invalid")
            << (task ? " command, shell or notebook config" : " experiment config") << " (" << errors.size()
            << " error" << (errors.size() == 1 ? "" : "s") << ", " << warnings.size() << " warning"
            << (warnings.size() == 1 ? "" : "s") << ")\n";
    if (!not_checked.empty()) {
      env.out << "Not checked offline (give the master with -m URL to check them too):\n";
      for (const auto& what : not_checked) env.out << "  " << what.get<std::string>() << '\n';
    }
  }
  return errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace ring::cli
