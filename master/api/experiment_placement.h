#pragma once
// Where a submitted experiment goes: its project (POST /experiments
// "project_id", else the config's workspace and project, else the default
// project), which the submitter must belong to the workspace of, and the
// pool its workspace's default binding gives a config that names none. Also the pools a user may submit to
// through the workspaces they belong to. Reads the store only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/auth/principal.h"
#include "master/store/store.h"

namespace ring {

struct SubmitPlace {
  ProjectRecord project;
  WorkspaceRecord workspace;
};

// The project `project_id` names, else the one the config names by its
// `workspace` and `project` keys (Determined's), else the default one, if
// `who` may submit there: a member of its workspace or an admin, neither
// of them archived. kInvalidArgument naming project_id (or
// workspace/project) otherwise.
Result<SubmitPlace> PlaceSubmission(Store& store, const Principal& who, std::optional<int64_t> project_id,
                                    const std::string& config_yaml);

// Whether the experiment config names its project (workspace and project).
bool ConfigNamesProject(const std::string& config_yaml);

// Whether the experiment config names resources.resource_pool.
bool ConfigNamesPool(const std::string& config_yaml);

// The config with resources.resource_pool set to the workspace's default
// bound pool when it names none and the workspace has one; else unchanged.
Result<std::string> WithWorkspacePool(const std::string& config_yaml, const WorkspaceRecord& workspace);

}  // namespace ring
