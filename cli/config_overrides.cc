#include "cli/config_overrides.h"

#include <yaml-cpp/yaml.h>

namespace ring::cli {
namespace {

std::vector<std::string> SplitDots(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(key.substr(start, dot - start));
  parts.push_back(key.substr(start));
  return parts;
}

Status Set(YAML::Node root, const std::string& key, const YAML::Node& value) {
  const auto parts = SplitDots(key);
  for (const auto& p : parts)
    if (p.empty()) return InvalidArgument("--config " + key + ": a key part is empty");
  YAML::Node node = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = node[parts[i]];
    if (!next || next.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = node[parts[i]];
    }
    if (!next.IsMap())
      return InvalidArgument("--config " + key + ": " + parts[i] + " is not a map in the config");
    node.reset(next);
  }
  node[parts.back()] = value;
  return Status::Ok();
}

std::string Emit(const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

Result<std::string> ApplyConfigOverrides(const std::string& yaml_text,
                                         const std::vector<std::string>& overrides) {
  if (overrides.empty()) return yaml_text;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig,
                  "the config is not valid YAML, so --config cannot change it: " + e.msg);
  }
  if (!root.IsMap()) return Status(ErrorCode::kInvalidConfig, "the config must be a map of keys");
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("--config expects key=value (nested keys with dots), got \"" + o + "\"");
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      return InvalidArgument("--config " + o + ": the value is not a YAML scalar: " + e.msg);
    }
    if (value.IsMap() || value.IsSequence())
      return InvalidArgument("--config " + o + ": the value must be a scalar (a number, a word, true, null)");
    if (Status s = Set(root, o.substr(0, eq), value); !s.ok()) return s;
  }
  return Emit(root);
}

Result<std::string> TestModeConfig(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig, "the config is not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) return Status(ErrorCode::kInvalidConfig, "the config must be a map of keys");
  // One trial of the default hyperparameters, trained one batch when it
  // follows searcher operations, never restarted; the CLI stops it after its
  // first validation.
  YAML::Node old = root["searcher"];
  YAML::Node searcher(YAML::NodeType::Map);
  searcher["name"] = "single";
  if (old && old.IsMap()) {
    for (const char* keep : {"metric", "smaller_is_better", "source_trial_id", "source_checkpoint_uuid"})
      if (old[keep]) searcher[keep] = old[keep];
  }
  YAML::Node length(YAML::NodeType::Map);
  length["batches"] = 1;
  searcher["max_length"] = length;
  root["searcher"] = searcher;
  root["max_restarts"] = 0;
  const std::string name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : "Experiment";
  root["name"] = name + " (test)";
  return Emit(root);
}

}  // namespace ring::cli
