#include "cli/experiment_info_commands.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/format.h"

namespace ring::cli {
namespace {

int Patch(CliEnv& env, int64_t id, const nlohmann::json& patch, const std::string& said) {
  auto res = env.master.Patch("/api/v1/experiments/" + std::to_string(id), patch);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << "Experiment " << id << ": " << said << '\n';
  return kExitOk;
}

// A count written in decimal digits only.
std::optional<int64_t> ParseCount(const std::string& text) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), ::isdigit))
    return std::nullopt;
  return std::stoll(text);
}

}  // namespace

int SetExperimentInfo(CliEnv& env, int64_t id, const std::string& what, const std::string& value) {
  return Patch(env, id, {{what, value}}, what + " set");
}

int SetExperimentRetention(CliEnv& env, int64_t id, const std::string& what, const std::string& value) {
  nlohmann::json patch;
  if (what == "log-retention-days") {
    if (value == "default") {
      patch["log_retention_days"] = nullptr;
    } else if (value == "forever") {
      patch["log_retention_days"] = -1;
    } else {
      auto days = ParseCount(value);
      if (!days) {
        env.err << "ring: error: log-retention-days must be a number of days, forever, or default, got \""
                << value << "\"\n";
        return kExitUsage;
      }
      patch["log_retention_days"] = *days;
    }
  } else {
    auto count = ParseCount(value);
    if (!count) {
      env.err << "ring: error: " << what << " must be an integer >= 0, got \"" << value << "\"\n";
      return kExitUsage;
    }
    std::string key = what;
    std::replace(key.begin(), key.end(), '-', '_');
    patch["checkpoint_storage"][key] = *count;
  }
  return Patch(env, id, patch, what + " set to " + value);
}

int EditExperimentLabel(CliEnv& env, int64_t id, bool add, const std::string& label) {
  auto exp = env.master.Get("/api/v1/experiments/" + std::to_string(id));
  if (!exp.ok()) return env.Fail(exp.status());
  std::vector<std::string> labels;
  for (const auto& l : Member(*exp, "labels"))
    if (l.is_string()) labels.push_back(l.get<std::string>());
  const auto at = std::find(labels.begin(), labels.end(), label);
  const bool has = at != labels.end();
  if (!add && !has)
    return env.Fail(NotFound("experiment " + std::to_string(id) + " has no label \"" + label + "\""));
  if (add && !has) labels.push_back(label);
  if (!add) labels.erase(at);
  std::string list;
  for (const auto& l : labels) list += (list.empty() ? "" : ", ") + l;
  return Patch(env, id, {{"labels", labels}}, "labels " + (list.empty() ? std::string("(none)") : list));
}

int DeleteExperiment(CliEnv& env, int64_t id, bool yes) {
  const std::string target = "/api/v1/experiments/" + std::to_string(id);
  if (!yes) {
    if (!::isatty(0))
      return env.Fail(InvalidArgument("deleting experiment " + std::to_string(id) +
                                      " removes its trials, metrics, logs and checkpoint files; pass --yes"));
    env.err << "Delete experiment " << id << " with its trials, metrics, logs and checkpoint files? [y/N] ";
    env.err.flush();
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      env.err << "Not deleted.\n";
      return kExitUsage;
    }
  }
  auto res = env.master.Delete(target);
  if (!res.ok()) return env.Fail(res.status());
  // Gone once the master answers 404 (its files first, then its rows).
  for (int i = 0; i < 600; ++i) {
    auto probe = env.master.Get("/api/v1/experiments/" + std::to_string(id) + "/trials");
    if (!probe.ok() && probe.status().code() == ErrorCode::kNotFound) {
      if (env.json)
        env.out << nlohmann::json{{"id", id}, {"deleted", true}}.dump(2) << '\n';
      else
        env.out << "Experiment " << id << " deleted\n";
      return kExitOk;
    }
    std::this_thread::sleep_for(env.poll_interval);
  }
  return env.Fail(Unavailable("experiment " + std::to_string(id) +
                              " is still being deleted; the master finishes it (see its log)"));
}

}  // namespace ring::cli
