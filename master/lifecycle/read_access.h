#pragma once
// Who may read an experiment: the one rule for an experiment, its trials,
// logs, metrics, checkpoints, model definition and the model versions
// registered from it (docs/security.md, "Who reads what"). Its owner and
// admins always may; where master.yaml keeps experiments_team_readable
// (the default) every user may; otherwise the members of the workspace its
// project is in, unless that is the default workspace (which holds every
// user, so it widens nothing: only owners and admins read there). Also who belongs to a workspace: the
// default workspace holds every user. Reads the store only (thread-safe).
#include <string>

#include "master/store/store.h"

namespace ring {

struct Reader {
  std::string username;
  bool admin = false;
  bool team_readable = true;  // master.yaml experiments_team_readable
};

// Whether `username` belongs to `w` (every user belongs to the default one).
bool IsWorkspaceMember(const WorkspaceRecord& w, const std::string& username);
// Whether `username` is an ADMIN of `w`.
bool IsWorkspaceAdmin(const WorkspaceRecord& w, const std::string& username);
// The workspace of project `project_id`.
Result<WorkspaceRecord> WorkspaceOfProject(Store& store, int64_t project_id);
// Whether `who` may read experiment `e` under the rule above.
Result<bool> MayReadExperiment(Store& store, const ExperimentRecord& e, const Reader& who);
// The pools bound to workspaces `username` belongs to (any workspace's,
// for none: the caller checks admins apart).
Result<std::vector<std::string>> PoolsBoundFor(Store& store, const std::string& username);

}  // namespace ring
