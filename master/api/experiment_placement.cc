#include "master/api/experiment_placement.h"

#include <yaml-cpp/yaml.h>

#include "common/config_template.h"
#include "master/lifecycle/read_access.h"

namespace ring {

Result<SubmitPlace> PlaceSubmission(Store& store, const Principal& who, std::optional<int64_t> project_id) {
  const int64_t id = project_id.value_or(kDefaultProjectId);
  auto project = store.GetProject(id);
  if (!project.ok()) {
    if (project.status().code() == ErrorCode::kNotFound)
      return InvalidArgument("project_id: project " + std::to_string(id) + " not found");
    return project.status();
  }
  auto workspace = store.GetWorkspace(project->workspace_id);
  if (!workspace.ok()) return workspace.status();
  if (!who.admin() && !IsWorkspaceMember(*workspace, who.username))
    return InvalidArgument("project_id: project " + std::to_string(id) + " not found (or " + who.username +
                           " is not a member of its workspace)");
  if (project->archived || workspace->archived)
    return InvalidArgument("project_id: project \"" + project->name + "\" (workspace \"" + workspace->name +
                           "\") is archived; unarchive it or submit elsewhere");
  return SubmitPlace{*project, *workspace};
}

bool ConfigNamesPool(const std::string& config_yaml) {
  try {
    YAML::Node root = YAML::Load(config_yaml);
    if (!root.IsMap()) return false;
    YAML::Node resources = root["resources"];
    if (!resources || !resources.IsMap()) return false;
    YAML::Node pool = resources["resource_pool"];
    return pool && !pool.IsNull() && !(pool.IsScalar() && pool.Scalar().empty());
  } catch (const YAML::Exception&) {
    return false;  // the config's own check reports it
  }
}

Result<std::string> WithWorkspacePool(const std::string& config_yaml, const WorkspaceRecord& workspace) {
  const WorkspacePool* chosen = nullptr;
  for (const auto& p : workspace.pools)
    if (p.is_default) chosen = &p;
  if (chosen == nullptr || ConfigNamesPool(config_yaml)) return config_yaml;
  YAML::Emitter base;
  base << YAML::BeginMap << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key
       << "resource_pool" << YAML::Value << chosen->pool << YAML::EndMap << YAML::EndMap;
  auto merged =
      ApplyTemplate("workspace \"" + workspace.name + "\"'s default pool", base.c_str(), config_yaml);
  if (!merged.ok()) return config_yaml;  // a config that is no map: its own check reports it
  return merged;
}

}  // namespace ring
