#include "common/config_retention.h"

#include <yaml-cpp/yaml.h>

namespace ring {

Result<std::string> WithRetention(const std::string& config_yaml, const RetentionPatch& patch) {
  YAML::Node config;
  try {
    config = YAML::Load(config_yaml);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig, "the stored config is not YAML: " + e.msg);
  }
  if (!config.IsMap()) return Status(ErrorCode::kInvalidConfig, "the stored config is not a map");
  for (auto [key, value] : {std::pair{"save_experiment_best", patch.save_experiment_best},
                            std::pair{"save_trial_best", patch.save_trial_best},
                            std::pair{"save_trial_latest", patch.save_trial_latest}}) {
    if (!value) continue;
    if (!config["checkpoint_storage"].IsMap()) config["checkpoint_storage"] = YAML::Node(YAML::NodeType::Map);
    config["checkpoint_storage"][key] = *value;
  }
  if (patch.log_retention_days) {
    const bool top = config["log_retention_days"].IsDefined();
    YAML::Node policy = config["retention_policy"];
    if (!*patch.log_retention_days) {  // back to the master's setting
      config.remove("log_retention_days");
      if (policy.IsMap()) {
        policy.remove("log_retention_days");
        if (policy.size() == 0) config.remove("retention_policy");
      }
    } else if (top) {
      config["log_retention_days"] = **patch.log_retention_days;
    } else {
      if (!policy.IsMap()) config["retention_policy"] = YAML::Node(YAML::NodeType::Map);
      config["retention_policy"]["log_retention_days"] = **patch.log_retention_days;
    }
  }
  YAML::Emitter out;
  out << config;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ring
