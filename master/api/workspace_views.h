#pragma once
// Workspaces and projects as the REST API shows them, and where an
// experiment is: its project and workspace, by id and name, read once per
// answer (PlacementNames) so a list does not read them per experiment.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/store/store.h"

namespace ring {

nlohmann::json WorkspaceJson(const WorkspaceRecord& w);
nlohmann::json ProjectJson(const ProjectRecord& p, const std::string& workspace_name);

class PlacementNames {
 public:
  static Result<PlacementNames> Load(Store& store);
  // Adds "project_id", "project", "workspace_id", "workspace" to an experiment's view.
  void AddTo(nlohmann::json& view, int64_t project_id) const;
  // The workspace of a project; 0 for an unknown project.
  int64_t WorkspaceOf(int64_t project_id) const;

 private:
  std::map<int64_t, ProjectRecord> projects_;
  std::map<int64_t, std::string> workspace_names_;
};

// An optional string field of a request body: nullopt when absent or null.
Result<std::optional<std::string>> OptString(const nlohmann::json& j, const char* key);
// A workspace's or project's name (`what`): 1 to 128 characters without "/".
Status CheckPlaceName(const std::string& what, const std::string& name);
// The body of a POST (`patch` false: {"name", "description"?}, the name
// required) or a PATCH (`patch` true: any of {"name", "description",
// "archived"}) of a workspace or project (`what`); `is_default`: the
// default one, which is never archived (kConflict).
Result<PlaceUpdate> ParsePlaceBody(const nlohmann::json& body, const std::string& what, bool patch,
                                   bool is_default = false);

// A project named by id ("7") or by "workspace/project"; kInvalidArgument
// naming `key` for text that is neither, kNotFound for no such project.
Result<ProjectRecord> FindProject(Store& store, const std::string& text, const std::string& key);

}  // namespace ring
