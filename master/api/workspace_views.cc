#include "master/api/workspace_views.h"

#include <charconv>

#include "common/json_fields.h"

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

Result<std::optional<std::string>> OptString(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return InvalidArgument(std::string(key) + " must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

Status CheckPlaceName(const std::string& what, const std::string& name) {
  if (name.empty() || name.size() > 128 || name.find('/') != std::string::npos)
    return InvalidArgument(what + " name must be 1 to 128 characters without \"/\", got \"" +
                           name.substr(0, 64) + "\"");
  return Status::Ok();
}

Result<PlaceUpdate> ParsePlaceBody(const nlohmann::json& body, const std::string& what, bool patch,
                                   bool is_default) {
  if (Status s = patch ? CheckKnownFields(body, {"name", "description", "archived"}, "the request body")
                       : CheckKnownFields(body, {"name", "description"}, "the request body");
      !s.ok())
    return s;
  auto name = OptString(body, "name");
  auto description = OptString(body, "description");
  if (!name.ok()) return name.status();
  if (!description.ok()) return description.status();
  PlaceUpdate u;
  u.name = *name;
  u.description = *description;
  if (!patch || u.name)
    if (Status s = CheckPlaceName(what, u.name.value_or("")); !s.ok()) return s;
  if (auto a = body.find("archived"); patch && a != body.end() && !a->is_null()) {
    if (!a->is_boolean()) return InvalidArgument("archived must be true or false");
    u.archived = a->get<bool>();
    if (*u.archived && is_default)
      return Conflict("the default " + what + " (Uncategorized) is never archived");
  }
  return u;
}

}  // namespace ring
