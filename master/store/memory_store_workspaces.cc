// MemoryStore: workspaces, their members and bound pools, and projects.
#include <algorithm>

#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

Status MissingWorkspace(int64_t id) {
  return NotFound("workspace " + std::to_string(id) + " not found");
}

Status MissingProject(int64_t id) {
  return NotFound("project " + std::to_string(id) + " not found");
}

template <typename T, typename Key>
void SortBy(std::vector<T>& items, Key key) {
  std::sort(items.begin(), items.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

}  // namespace

std::map<int64_t, WorkspaceRecord> MemoryStore::DefaultWorkspaces() {
  WorkspaceRecord w;
  w.id = kDefaultWorkspaceId;
  w.name = "Uncategorized";
  w.description = "every user; experiments submitted without a project";
  w.created_by = "admin";
  w.created_at = NowRfc3339();
  return {{w.id, w}};
}

std::map<int64_t, ProjectRecord> MemoryStore::DefaultProjects() {
  ProjectRecord p;
  p.id = kDefaultProjectId;
  p.workspace_id = kDefaultWorkspaceId;
  p.name = "Uncategorized";
  p.description = "experiments submitted without a project";
  p.created_by = "admin";
  p.created_at = NowRfc3339();
  return {{p.id, p}};
}

int64_t MemoryStore::ExperimentsIn(int64_t project_id) const {
  int64_t n = 0;
  for (const auto& [id, e] : experiments_)
    if (e.record.project_id == project_id) ++n;
  return n;
}

Result<WorkspaceRecord> MemoryStore::CreateWorkspace(const WorkspaceRecord& w) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (w.name.empty()) return InvalidArgument("a workspace needs a name");
  for (const auto& [id, other] : workspaces_)
    if (other.name == w.name) return Conflict("workspace \"" + w.name + "\" exists already");
  WorkspaceRecord stored = w;
  stored.id = next_workspace_id_++;
  stored.created_at = NowRfc3339();
  stored.num_projects = 0;
  SortBy(stored.members, [](const WorkspaceMember& m) { return m.username; });
  SortBy(stored.pools, [](const WorkspacePool& p) { return p.pool; });
  workspaces_[stored.id] = stored;
  return stored;
}

Result<WorkspaceRecord> MemoryStore::GetWorkspace(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  WorkspaceRecord w = it->second;
  w.num_projects = std::count_if(projects_.begin(), projects_.end(),
                                 [id](const auto& p) { return p.second.workspace_id == id; });
  return w;
}

Result<std::vector<WorkspaceRecord>> MemoryStore::ListWorkspaces() {
  std::lock_guard lock(mu_);
  std::vector<WorkspaceRecord> out;
  for (const auto& [key, w] : workspaces_) {
    const int64_t id = key;  // clang 14 cannot capture a structured binding
    out.push_back(w);
    out.back().num_projects = std::count_if(projects_.begin(), projects_.end(),
                                            [id](const auto& p) { return p.second.workspace_id == id; });
  }
  return out;
}

Status MemoryStore::UpdateWorkspace(int64_t id, const WorkspaceUpdate& u) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  if (u.name) {
    if (u.name->empty()) return InvalidArgument("a workspace needs a name");
    for (const auto& [other_id, other] : workspaces_)
      if (other_id != id && other.name == *u.name)
        return Conflict("workspace \"" + *u.name + "\" exists already");
    it->second.name = *u.name;
  }
  if (u.description) it->second.description = *u.description;
  if (u.archived) it->second.archived = *u.archived;
  return Status::Ok();
}

Status MemoryStore::DeleteWorkspace(int64_t id) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (!workspaces_.contains(id)) return MissingWorkspace(id);
  if (id == kDefaultWorkspaceId) return Conflict("the default workspace (Uncategorized) stays");
  for (const auto& [pid, p] : projects_)
    if (p.workspace_id == id && ExperimentsIn(pid) > 0)
      return Conflict("workspace " + std::to_string(id) + "'s project \"" + p.name +
                      "\" holds experiments; move or delete them first");
  std::erase_if(projects_, [id](const auto& p) { return p.second.workspace_id == id; });
  std::erase_if(deliveries_, [&](const auto& d) {
    auto w = webhooks_.find(d.second.webhook_id);
    return w != webhooks_.end() && w->second.workspace_id == id;
  });
  std::erase_if(webhooks_, [id](const auto& w) { return w.second.workspace_id == id; });
  workspaces_.erase(id);
  return Status::Ok();
}

Status MemoryStore::SetWorkspaceMember(int64_t id, const WorkspaceMember& m) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  auto& members = it->second.members;
  auto found = std::find_if(members.begin(), members.end(),
                            [&](const WorkspaceMember& x) { return x.username == m.username; });
  if (found != members.end())
    found->role = m.role;
  else
    members.push_back(m);
  SortBy(members, [](const WorkspaceMember& x) { return x.username; });
  return Status::Ok();
}

Status MemoryStore::RemoveWorkspaceMember(int64_t id, const std::string& username) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  if (std::erase_if(it->second.members, [&](const WorkspaceMember& x) { return x.username == username; }) ==
      0)
    return NotFound(username + " is not a member of workspace " + std::to_string(id));
  return Status::Ok();
}

Status MemoryStore::BindWorkspacePool(int64_t id, const WorkspacePool& p) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  auto& pools = it->second.pools;
  if (p.is_default)
    for (auto& x : pools) x.is_default = false;
  std::erase_if(pools, [&](const WorkspacePool& x) { return x.pool == p.pool; });
  pools.push_back(p);
  SortBy(pools, [](const WorkspacePool& x) { return x.pool; });
  return Status::Ok();
}

Status MemoryStore::UnbindWorkspacePool(int64_t id, const std::string& pool) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = workspaces_.find(id);
  if (it == workspaces_.end()) return MissingWorkspace(id);
  if (std::erase_if(it->second.pools, [&](const WorkspacePool& x) { return x.pool == pool; }) == 0)
    return NotFound("workspace " + std::to_string(id) + " is not bound to pool \"" + pool + "\"");
  return Status::Ok();
}

Result<ProjectRecord> MemoryStore::CreateProject(const ProjectRecord& p) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (p.name.empty()) return InvalidArgument("a project needs a name");
  if (!workspaces_.contains(p.workspace_id)) return MissingWorkspace(p.workspace_id);
  for (const auto& [id, other] : projects_)
    if (other.workspace_id == p.workspace_id && other.name == p.name)
      return Conflict("workspace " + std::to_string(p.workspace_id) + " has a project \"" + p.name +
                      "\" already");
  ProjectRecord stored = p;
  stored.id = next_project_id_++;
  stored.created_at = NowRfc3339();
  stored.num_experiments = 0;
  projects_[stored.id] = stored;
  return stored;
}

Result<ProjectRecord> MemoryStore::GetProject(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = projects_.find(id);
  if (it == projects_.end()) return MissingProject(id);
  ProjectRecord p = it->second;
  p.num_experiments = ExperimentsIn(id);
  return p;
}

Result<std::vector<ProjectRecord>> MemoryStore::ListProjects() {
  std::lock_guard lock(mu_);
  std::vector<ProjectRecord> out;
  for (const auto& [id, p] : projects_) {
    out.push_back(p);
    out.back().num_experiments = ExperimentsIn(id);
  }
  return out;
}

Status MemoryStore::UpdateProject(int64_t id, const ProjectUpdate& u) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  auto it = projects_.find(id);
  if (it == projects_.end()) return MissingProject(id);
  if (u.name) {
    if (u.name->empty()) return InvalidArgument("a project needs a name");
    for (const auto& [other_id, other] : projects_)
      if (other_id != id && other.workspace_id == it->second.workspace_id && other.name == *u.name)
        return Conflict("workspace " + std::to_string(other.workspace_id) + " has a project \"" + *u.name +
                        "\" already");
    it->second.name = *u.name;
  }
  if (u.description) it->second.description = *u.description;
  if (u.archived) it->second.archived = *u.archived;
  return Status::Ok();
}

Status MemoryStore::DeleteProject(int64_t id) {
  const WriteNotice changes(experiments_generation_);  // lists show names and membership
  std::lock_guard lock(mu_);
  if (!projects_.contains(id)) return MissingProject(id);
  if (id == kDefaultProjectId) return Conflict("the default project (Uncategorized) stays");
  if (int64_t n = ExperimentsIn(id); n > 0)
    return Conflict("project " + std::to_string(id) + " holds " + std::to_string(n) +
                    " experiments; move or delete them first");
  projects_.erase(id);
  return Status::Ok();
}

Status MemoryStore::MoveExperiment(int64_t experiment_id, int64_t project_id) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  if (!projects_.contains(project_id)) return MissingProject(project_id);
  it->second.record.project_id = project_id;
  return Status::Ok();
}

}  // namespace ring
