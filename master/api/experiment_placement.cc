#include "master/api/experiment_placement.h"

#include <optional>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "common/config_template.h"
#include "master/lifecycle/read_access.h"

namespace ring {

namespace {

// The top-level string `key` of the config; empty when absent or not a string.
std::string TopLevelString(const YAML::Node& root, const char* key) {
  const YAML::Node v = root[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

// The config's `workspace` and `project` names, when it gives both.
std::optional<std::pair<std::string, std::string>> NamedProject(const std::string& config_yaml) {
  try {
    const YAML::Node root = YAML::Load(config_yaml);
    if (!root.IsMap()) return std::nullopt;
    std::string workspace = TopLevelString(root, "workspace");
    std::string project = TopLevelString(root, "project");
    if (workspace.empty() || project.empty()) return std::nullopt;  // the config's check reports one alone
    return std::make_pair(std::move(workspace), std::move(project));
  } catch (const YAML::Exception&) {
    return std::nullopt;  // the config's own check reports it
  }
}

// `project` if `who` may submit there; `key` and `shown` name it in errors.
Result<SubmitPlace> MayPlace(Store& store, const Principal& who, const ProjectRecord& project,
                             const std::string& key, const std::string& shown) {
  auto workspace = store.GetWorkspace(project.workspace_id);
  if (!workspace.ok()) return workspace.status();
  if (!who.admin() && !IsWorkspaceMember(*workspace, who.username))
    return InvalidArgument(key + ": " + shown + " not found (or " + who.username +
                           " is not a member of its workspace)");
  if (project.archived || workspace->archived)
    return InvalidArgument(key + ": project \"" + project.name + "\" (workspace \"" + workspace->name +
                           "\") is archived; unarchive it or submit elsewhere");
  return SubmitPlace{project, *workspace};
}

// The project the config names by workspace and project names.
Result<SubmitPlace> PlaceByNames(Store& store, const Principal& who, const std::string& workspace_name,
                                 const std::string& project_name) {
  const std::string key = "workspace/project";
  const std::string shown = "project \"" + workspace_name + "/" + project_name + "\"";
  auto workspaces = store.ListWorkspaces();
  if (!workspaces.ok()) return workspaces.status();
  auto projects = store.ListProjects();
  if (!projects.ok()) return projects.status();
  for (const auto& w : *workspaces) {
    if (w.name != workspace_name) continue;
    for (const auto& p : *projects)
      if (p.workspace_id == w.id && p.name == project_name) return MayPlace(store, who, p, key, shown);
  }
  return InvalidArgument(key + ": " + shown + " not found (or " + who.username +
                         " is not a member of its workspace); ring project list WORKSPACE shows them");
}

}  // namespace

Result<SubmitPlace> PlaceSubmission(Store& store, const Principal& who, std::optional<int64_t> project_id,
                                    const std::string& config_yaml) {
  if (!project_id)
    if (auto named = NamedProject(config_yaml)) return PlaceByNames(store, who, named->first, named->second);
  const int64_t id = project_id.value_or(kDefaultProjectId);
  auto project = store.GetProject(id);
  if (!project.ok()) {
    if (project.status().code() == ErrorCode::kNotFound)
      return InvalidArgument("project_id: project " + std::to_string(id) + " not found");
    return project.status();
  }
  return MayPlace(store, who, *project, "project_id", "project " + std::to_string(id));
}

bool ConfigNamesProject(const std::string& config_yaml) {
  return NamedProject(config_yaml).has_value();
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
