// checkpoint_storage and log_policies of the experiment config.
#include <filesystem>

#include "common/config_parser.h"
#include "common/log_policy.h"

namespace ring {
CheckpointStorageConfig ConfigParser::ParseCheckpointStorage(const YAML::Node& node) {
  const std::string p = "checkpoint_storage";
  CheckpointStorageConfig c;
  w_.RequireMap(node, p);
  if (Present(node["type"])) c.type = w_.String(node["type"], p + ".type");
  if (c.type == "s3" || c.type == "gcs" || c.type == "azure")
    w_.Fail(node["type"],
            p + ".type " + c.type +
                " is a Determined storage Ringmaster does not support yet: use shared_fs (a folder "
                "every agent mounts), or leave checkpoint_storage out for the master's default");
  // Determined's `directory` is a folder the trial sees at container_path;
  // without containers, that is the folder on the agent's host.
  const bool directory = c.type == "directory";
  if (c.type != "shared_fs" && !directory)
    w_.Fail(node["type"], p + ".type must be shared_fs or directory, got \"" + c.type + "\"");
  if (directory)
    Keys(node, p, {"type", "container_path", "save_experiment_best", "save_trial_best", "save_trial_latest"});
  else
    Keys(node, p,
         {"type", "host_path", "storage_path", "save_experiment_best", "save_trial_best",
          "save_trial_latest"});
  c.type = "shared_fs";
  const char* host_key = directory ? "container_path" : "host_path";
  Try(p + "." + host_key, [&] {
    const auto host = directory ? w_.Required(node, p, host_key) : node[host_key];
    if (!Present(host)) return;  // the master's default storage
    c.host_path = w_.String(host, p + "." + host_key, true);
    c.host_path_line = host.Mark().line + 1;
    if (c.host_path.front() != '/')
      w_.Fail(host, p + "." + host_key + " must be an absolute path, got \"" + c.host_path + "\"");
    for (const auto& part : std::filesystem::path(c.host_path))
      if (part == "..")
        w_.Fail(host, p + "." + host_key + " must not contain \"..\", got \"" + c.host_path + "\"");
  });
  Try(p + ".storage_path", [&] {
    const auto sub = node["storage_path"];
    if (directory || !Present(sub)) return;
    c.storage_path = w_.String(sub, p + ".storage_path");
    c.storage_path_line = sub.Mark().line + 1;
    if (!c.storage_path.empty() && c.storage_path.front() == '/')
      w_.Fail(sub,
              p + ".storage_path must be a relative path below host_path, got \"" + c.storage_path + "\"");
    for (const auto& part : std::filesystem::path(c.storage_path))
      if (part == ".." || part == ".")
        w_.Fail(sub, p + ".storage_path must not contain \"" + part.string() + "\", got \"" + c.storage_path +
                         "\"");
  });
  for (auto [key, field] : {std::pair{"save_experiment_best", &c.save_experiment_best},
                            std::pair{"save_trial_best", &c.save_trial_best},
                            std::pair{"save_trial_latest", &c.save_trial_latest}})
    Try(p + "." + key, [&, key = key, field = field] {
      if (Present(node[key])) *field = w_.Int(node[key], p + "." + key, 0, "an integer >= 0");
    });
  return c;
}

void ConfigParser::ParseLogPolicies(const YAML::Node& node, std::vector<LogPolicy>& out) {
  const std::string p = "log_policies";
  if (!node.IsSequence()) w_.Fail(node, p + " must be a list, got " + YamlWalker::Show(node));
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = p + "[" + std::to_string(i) + "]";
    const YAML::Node item = node[i];
    Try(at, [&] {
      Keys(item, at, {"name", "pattern", "action"});
      LogPolicy policy;
      policy.line = w_.Line(item);
      if (Present(item["name"])) policy.name = w_.String(item["name"], at + ".name", true);
      if (Present(item["pattern"])) {
        policy.pattern = w_.String(item["pattern"], at + ".pattern", true);
        std::string error;
        if (!LogPattern::Compile(*policy.pattern, error))
          w_.Fail(item["pattern"], at + ".pattern is not a valid regular expression (RE2 syntax, as Go's): " +
                                       error + ": \"" + *policy.pattern + "\"");
      }
      if (const auto action = item["action"]; Present(action)) {
        // "cancel_retries", or the older {type: cancel_retries}.
        YAML::Node type = action;
        if (action.IsMap()) {
          Keys(action, at + ".action", {"type"});
          type = w_.Required(action, at + ".action", "type");
        }
        const std::string name = w_.String(type, at + ".action");
        const auto parsed = ParseLogPolicyAction(name);
        if (!parsed || *parsed == LogPolicy::Action::kNone)
          w_.Fail(type, at + ".action must be cancel_retries or exclude_node, got \"" + name + "\"");
        policy.action = *parsed;
      }
      if (policy.name.empty() && (!policy.pattern || policy.action == LogPolicy::Action::kNone))
        w_.Fail(item, at + " needs a name, or a pattern and an action");
      out.push_back(std::move(policy));
    });
  }
}

}  // namespace ring
