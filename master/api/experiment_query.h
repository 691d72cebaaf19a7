#pragma once
// The experiments list as the web UI and scripts ask for it: filtered by
// state, owner, label, name and archived, sorted by a column, then paged
// (GET /api/v1/experiments). Also what the list shows from each experiment's
// config (labels, description, searcher metric and its direction), parsed
// once per distinct config text. Pure functions over records; no store.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"
#include "common/states.h"
#include "common/status.h"
#include "master/store/store.h"

namespace ring {

// What the list view needs from an experiment's config.
struct ConfigSummary {
  std::string description;
  std::vector<std::string> labels;
  std::string searcher = "single";
  std::string metric = "validation_loss";
  bool smaller_is_better = true;
  int64_t max_trials = 1;
  ResourcesConfig resources;  // as the config says, before any PATCH
};

// Parses the config (memoized by its text, thread-safe); a config that no
// longer parses gives the defaults.
ConfigSummary SummarizeConfig(const std::string& config_yaml);
// The config's summary with the description and labels edited after
// submit (ExperimentRecord::description, labels) in place of the config's.
ConfigSummary SummarizeExperiment(const ExperimentRecord& e);

// {"description", "labels", "searcher": {"name", "metric", "smaller_is_better", "max_trials"}}
// merged into an experiment's JSON view.
void AddConfigSummary(nlohmann::json& view, const ConfigSummary& summary);

struct ExperimentQuery {
  std::set<RunState> states;     // empty: any
  std::string owner;             // exact; empty: any
  std::string label;             // one of the config's labels; empty: any
  std::string name;              // case-insensitive substring of the name; empty: any
  std::optional<bool> archived;  // empty: both
  // In this project / workspace (workspace_views.h); empty: any. Applied by
  // the caller, which knows each project's workspace.
  std::optional<int64_t> project_id;
  std::optional<int64_t> workspace_id;
  std::string sort = "id";  // id, name, state, owner, progress, best_validation, num_trials, created_at
  bool descending = false;  // order=desc
  int64_t limit = 100;      // 1..1000
  int64_t offset = 0;
};

// Reads state (comma-separated), owner, label, name, archived, project_id,
// workspace_id, sort, order, limit and offset; a bad value is kInvalidArgument naming the parameter.
Result<ExperimentQuery> ParseExperimentQuery(const std::map<std::string, std::string>& query);

struct ExperimentRow {
  ExperimentRecord record;
  int64_t num_trials = -1;  // -1 until counted
};

// Keeps the rows the query selects and sorts them (ties by id); `count_trials`
// fills num_trials when the sort needs it. Paging is left to the caller.
std::vector<ExperimentRow> SelectExperiments(std::vector<ExperimentRow> rows, const ExperimentQuery& q,
                                             const std::function<int64_t(int64_t)>& count_trials);

// The owners and labels over all rows, sorted, for the list's filters.
nlohmann::json ExperimentFacets(const std::vector<ExperimentRow>& rows);

}  // namespace ring
