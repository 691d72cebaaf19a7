#include "cli/experiment_info_commands.h"

#include <algorithm>

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

}  // namespace

int SetExperimentInfo(CliEnv& env, int64_t id, const std::string& what, const std::string& value) {
  return Patch(env, id, {{what, value}}, what + " set");
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

}  // namespace ring::cli
