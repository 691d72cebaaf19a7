#include "master/api/workspace_views.h"

#include <charconv>

namespace ring {

nlohmann::json WorkspaceJson(const WorkspaceRecord& w) {
  nlohmann::json members = nlohmann::json::array();
  for (const auto& m : w.members) members.push_back({{"username", m.username}, {"role", ToString(m.role)}});
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& p : w.pools) pools.push_back({{"pool", p.pool}, {"default", p.is_default}});
  return {{"id", w.id},
          {"name", w.name},
          {"description", w.description},
          {"created_by", w.created_by},
          {"archived", w.archived},
          {"created_at", w.created_at},
          {"default", w.id == kDefaultWorkspaceId},
          {"members", members},
          {"pools", pools},
          {"num_projects", w.num_projects}};
}

nlohmann::json ProjectJson(const ProjectRecord& p, const std::string& workspace_name) {
  return {{"id", p.id},
          {"workspace_id", p.workspace_id},
          {"workspace", workspace_name},
          {"name", p.name},
          {"description", p.description},
          {"created_by", p.created_by},
          {"archived", p.archived},
          {"created_at", p.created_at},
          {"default", p.id == kDefaultProjectId},
          {"num_experiments", p.num_experiments}};
}

Result<PlacementNames> PlacementNames::Load(Store& store) {
  PlacementNames names;
  auto projects = store.ListProjects();
  if (!projects.ok()) return projects.status();
  for (auto& p : *projects) names.projects_[p.id] = std::move(p);
  auto workspaces = store.ListWorkspaces();
  if (!workspaces.ok()) return workspaces.status();
  for (const auto& w : *workspaces) names.workspace_names_[w.id] = w.name;
  return names;
}

void PlacementNames::AddTo(nlohmann::json& view, int64_t project_id) const {
  view["project_id"] = project_id;
  view["project"] = "";
  view["workspace_id"] = 0;
  view["workspace"] = "";
  auto p = projects_.find(project_id);
  if (p == projects_.end()) return;
  view["project"] = p->second.name;
  view["workspace_id"] = p->second.workspace_id;
  if (auto w = workspace_names_.find(p->second.workspace_id); w != workspace_names_.end())
    view["workspace"] = w->second;
}

int64_t PlacementNames::WorkspaceOf(int64_t project_id) const {
  auto p = projects_.find(project_id);
  return p == projects_.end() ? 0 : p->second.workspace_id;
}

Result<ProjectRecord> FindProject(Store& store, const std::string& text, const std::string& key) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec == std::errc() && end == text.data() + text.size() && id > 0) return store.GetProject(id);
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
    return InvalidArgument(key + " must be a project id or WORKSPACE/PROJECT, got \"" + text.substr(0, 64) +
                           "\"");
  const std::string workspace = text.substr(0, slash), project = text.substr(slash + 1);
  auto workspaces = store.ListWorkspaces();
  if (!workspaces.ok()) return workspaces.status();
  auto projects = store.ListProjects();
  if (!projects.ok()) return projects.status();
  for (const auto& w : *workspaces)
    if (w.name == workspace)
      for (const auto& p : *projects)
        if (p.workspace_id == w.id && p.name == project) return p;
  return NotFound(key + ": no project \"" + project + "\" in workspace \"" + workspace + "\"");
}

}  // namespace ring
