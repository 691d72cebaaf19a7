#pragma once
// Workspaces and projects as the store keeps them (migration 0024). Every
// experiment belongs to a project and every project to a workspace;
// workspace 1 and its project 1, both "Uncategorized", always exist: the
// workspace holds every user without membership rows, the project every
// experiment submitted without one.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/workspace_role.h"

namespace ring {

inline constexpr int64_t kDefaultWorkspaceId = 1;
inline constexpr int64_t kDefaultProjectId = 1;

struct WorkspaceMember {
  std::string username;
  WorkspaceRole role = WorkspaceRole::kMember;
};

// A pool a workspace is bound to: its members may submit there, and the
// default one is where their experiments go when the config names no pool.
struct WorkspacePool {
  std::string pool;
  bool is_default = false;
};

struct WorkspaceRecord {
  int64_t id = 0;  // set by the store
  std::string name;
  std::string description;
  std::string created_by;
  bool archived = false;
  std::string created_at;                // set by the store
  std::vector<WorkspaceMember> members;  // by username; none in the default workspace
  std::vector<WorkspacePool> pools;      // by pool name
  int64_t num_projects = 0;              // read only
};

// What PATCH /workspaces/{id} changes; each absent field stays as it is.
// What PATCH changes of a workspace or a project; each absent field stays.
struct PlaceUpdate {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<bool> archived;
};
using WorkspaceUpdate = PlaceUpdate;

struct ProjectRecord {
  int64_t id = 0;  // set by the store
  int64_t workspace_id = kDefaultWorkspaceId;
  std::string name;
  std::string description;
  std::string created_by;
  bool archived = false;
  std::string created_at;       // set by the store
  int64_t num_experiments = 0;  // read only (experiments being deleted count too)
};

// What PATCH /projects/{id} changes.
using ProjectUpdate = PlaceUpdate;

}  // namespace ring
