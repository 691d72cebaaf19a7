#include "master/lifecycle/read_access.h"

#include <algorithm>

namespace ring {

bool IsWorkspaceMember(const WorkspaceRecord& w, const std::string& username) {
  if (w.id == kDefaultWorkspaceId) return true;
  return std::any_of(w.members.begin(), w.members.end(),
                     [&](const WorkspaceMember& m) { return m.username == username; });
}

bool IsWorkspaceAdmin(const WorkspaceRecord& w, const std::string& username) {
  return std::any_of(w.members.begin(), w.members.end(), [&](const WorkspaceMember& m) {
    return m.username == username && m.role == WorkspaceRole::kAdmin;
  });
}

Result<WorkspaceRecord> WorkspaceOfProject(Store& store, int64_t project_id) {
  auto project = store.GetProject(project_id);
  if (!project.ok()) return project.status();
  return store.GetWorkspace(project->workspace_id);
}

Result<bool> MayReadExperiment(Store& store, const ExperimentRecord& e, const Reader& who) {
  if (who.admin || who.team_readable || e.owner == who.username) return true;
  auto workspace = WorkspaceOfProject(store, e.project_id);
  if (!workspace.ok()) return workspace.status();
  // The default workspace holds every user: its membership widens no
  // reading, so a master that keeps experiments private keeps them so.
  return workspace->id != kDefaultWorkspaceId && IsWorkspaceMember(*workspace, who.username);
}

Result<std::vector<std::string>> PoolsBoundFor(Store& store, const std::string& username) {
  auto workspaces = store.ListWorkspaces();
  if (!workspaces.ok()) return workspaces.status();
  std::vector<std::string> pools;
  for (const auto& w : *workspaces)
    if (!w.archived && IsWorkspaceMember(w, username))
      for (const auto& p : w.pools) pools.push_back(p.pool);
  return pools;
}

}  // namespace ring
