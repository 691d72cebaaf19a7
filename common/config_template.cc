#include "common/config_template.h"

#include <yaml-cpp/yaml.h>

namespace ring {
namespace {

Result<YAML::Node> LoadMap(const std::string& what, const std::string& text) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidConfig,
                  what + ":" + std::to_string(std::max(1, e.mark.line + 1)) + ": invalid YAML: " + e.msg);
  }
  if (node.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!node.IsMap())
    return Status(ErrorCode::kInvalidConfig, what + ":" + std::to_string(node.Mark().line + 1) +
                                                 ": a config must be a map of keys, such as searcher: ...");
  return node;
}

// `over` laid over `base` (which it changes).
void Merge(YAML::Node base, const YAML::Node& over) {
  for (const auto& kv : over) {
    const std::string key = kv.first.as<std::string>();
    YAML::Node existing = base[key];
    if (existing.IsDefined() && existing.IsMap() && kv.second.IsMap())
      Merge(existing, kv.second);
    else
      base[key] = YAML::Clone(kv.second);
  }
}

}  // namespace

Status CheckTemplateText(const std::string& name, const std::string& yaml_text) {
  auto node = LoadMap("template " + name, yaml_text);
  return node.ok() ? Status::Ok() : node.status();
}

Result<std::string> ApplyTemplate(const std::string& template_name, const std::string& template_yaml,
                                  const std::string& config_yaml) {
  auto base = LoadMap("template " + template_name, template_yaml);
  if (!base.ok()) return base.status();
  auto over = LoadMap("experiment.yaml", config_yaml);
  if (!over.ok()) return over.status();
  YAML::Node merged = YAML::Clone(*base);
  Merge(merged, *over);
  YAML::Emitter out;
  out << merged;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ring
