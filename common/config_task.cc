// The config of a task that is not a trial: Determined's command config
// (the same file serves commands, shells and notebooks). Unknown keys are
// errors naming the key and its line, as in experiment configs.
#include <algorithm>
#include <cctype>

#include "common/config_parser.h"
#include "common/task_config.h"

namespace ring {

std::optional<int64_t> DurationSeconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;
  const int64_t n = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  if (unit.empty() || unit == "s") return n;
  if (unit == "m") return n * 60;
  if (unit == "h") return n * 3600;
  return std::nullopt;
}

TaskSpec ConfigParser::ParseTask(const YAML::Node& root) {
  TaskSpec t;
  if (!Present(root)) return t;
  w_.set_document(root);
  w_.RequireMap(root, "");
  w_.CheckKeys(root, "",
               {"description", "entrypoint", "resources", "environment", "bind_mounts", "idle_timeout",
                "notebook_idle_type", "work_dir", "debug"});
  Try("description", [&] {
    if (Present(root["description"])) t.description = w_.String(root["description"], "description");
  });
  Try("entrypoint", [&] {
    if (!Present(root["entrypoint"])) return;
    ExperimentConfig c;
    ParseEntrypoint(root["entrypoint"], c);
    t.argv = c.entrypoint_argv.empty() ? std::vector<std::string>{"/bin/sh", "-c", c.entrypoint}
                                       : c.entrypoint_argv;
  });
  Try("resources", [&] {
    const YAML::Node r = root["resources"];
    if (!Present(r)) return;
    const std::string p = "resources";
    w_.RequireMap(r, p);
    w_.CheckKeys(r, p, {"slots", "resource_pool", "priority", "weight", "preemptible", "shm_size"});
    // shm_size: accepted and not applied, as in experiment configs (docs/interactive.md).
    Try(p + ".shm_size", [&] {
      const YAML::Node v = r["shm_size"];
      if (Present(v) && !v.IsScalar())
        w_.Fail(v, p + ".shm_size must be a size in bytes, got " + YamlWalker::Show(v));
    });
    Try(p + ".slots", [&] {
      if (Present(r["slots"])) t.slots = w_.Int(r["slots"], p + ".slots", 0, "an integer of 0 or more");
    });
    Try(p + ".resource_pool", [&] {
      if (!Present(r["resource_pool"])) return;
      t.resource_pool = w_.String(r["resource_pool"], p + ".resource_pool");
      if (t.resource_pool.empty()) t.resource_pool = "default";  // Determined's "" is the default pool
    });
    Try(p + ".priority", [&] {
      if (!Present(r["priority"])) return;
      t.priority = w_.Int(r["priority"], p + ".priority", 1, "an integer from 1 to 99");
      if (t.priority > 99)
        w_.Fail(r["priority"],
                p + ".priority must be an integer from 1 to 99, got " + YamlWalker::Show(r["priority"]));
    });
    Try(p + ".weight", [&] {
      if (!Present(r["weight"])) return;
      t.weight = w_.Double(r["weight"], p + ".weight");
      if (!(t.weight > 0))
        w_.Fail(r["weight"], p + ".weight must be positive, got " + YamlWalker::Show(r["weight"]));
    });
    Try(p + ".preemptible", [&] {
      if (Present(r["preemptible"])) t.preemptible = w_.Bool(r["preemptible"], p + ".preemptible");
    });
  });
  Try("environment", [&] {
    if (!Present(root["environment"])) return;
    w_.RequireMap(root["environment"], "environment");
    ParseEnvironment(root["environment"], t.environment);
  });
  Try("bind_mounts", [&] {
    if (Present(root["bind_mounts"])) ParseBindMounts(root["bind_mounts"], t.bind_mounts);
  });
  Try("bind_mounts", [&] {
    if (!t.bind_mounts.empty() && !t.environment.HasImage())
      w_.Fail(root["bind_mounts"], "bind_mounts need environment.image: a task on the host sees its files");
  });
  Try("idle_timeout", [&] {
    const YAML::Node v = root["idle_timeout"];
    if (!Present(v)) return;
    const std::string text = w_.String(v, "idle_timeout");
    t.idle_timeout_s = DurationSeconds(text);
    if (!t.idle_timeout_s)
      w_.Fail(v, "idle_timeout must be a duration such as 30m, 1h or 45s, got " + YamlWalker::Show(v));
  });
  Try("notebook_idle_type", [&] {
    const YAML::Node v = root["notebook_idle_type"];
    if (!Present(v)) return;
    const auto type = ParseNotebookIdleType(w_.String(v, "notebook_idle_type"));
    if (!type)
      w_.Fail(v, "notebook_idle_type must be kernels_or_terminals, kernel_connections or activity, got " +
                     YamlWalker::Show(v));
    else
      t.notebook_idle_type = *type;
  });
  Try("work_dir", [&] {
    if (Present(root["work_dir"]))
      w_.Fail(root["work_dir"],
              "work_dir is not supported: a task runs in its own folder, where its context is unpacked");
  });
  Try("debug", [&] {
    if (Present(root["debug"])) w_.Bool(root["debug"], "debug");  // accepted, no effect
  });
  return t;
}

Result<TaskSpec> ParseTaskConfig(const std::string& yaml_text, const std::string& file_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig, file_name + ":" + std::to_string(std::max(1, e.mark.line + 1)) +
                                                 ": invalid YAML: " + e.msg);
  }
  ConfigParser parser(file_name);
  TaskSpec spec;
  try {
    spec = parser.ParseTask(root);
  } catch (const ConfigError& e) {
    parser.walker().Record(e, "");
  } catch (const std::exception& e) {  // user input never takes a daemon down
    parser.walker().errors().push_back({"", 1, std::string("cannot read the config: ") + e.what()});
  }
  auto& errors = parser.walker().errors();
  if (errors.empty()) return spec;
  std::stable_sort(errors.begin(), errors.end(),
                   [](const ConfigIssue& a, const ConfigIssue& b) { return a.line < b.line; });
  std::string text;
  for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e.Text(file_name);
  return Status(ErrorCode::kInvalidConfig, text);
}

Result<TaskSpec> ApplyTaskFlags(TaskSpec spec, const TaskFlags& flags) {
  if (flags.slots) spec.slots = *flags.slots;
  if (flags.resource_pool)
    spec.resource_pool = flags.resource_pool->empty() ? "default" : *flags.resource_pool;
  if (flags.priority) spec.priority = *flags.priority;
  if (flags.preemptible) spec.preemptible = *flags.preemptible;
  if (flags.description) spec.description = *flags.description;
  if (!flags.argv.empty()) spec.argv = flags.argv;
  if (spec.argv.empty() || spec.argv.front().empty())
    return InvalidArgument("argv: nothing to run: give a command after -- or an entrypoint in the config");
  if (spec.slots < 0) return InvalidArgument("slots must be 0 or more, got " + std::to_string(spec.slots));
  if (spec.priority < 1 || spec.priority > 99)
    return InvalidArgument("priority must be an integer from 1 to 99, got " + std::to_string(spec.priority));
  if (!(spec.weight > 0)) return InvalidArgument("weight must be positive");
  return spec;
}

}  // namespace ring
