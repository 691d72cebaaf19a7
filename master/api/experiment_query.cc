#include "master/api/experiment_query.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "common/experiment_config.h"

namespace ring {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ParseInt(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

const std::set<std::string>& SortKeys() {
  static const std::set<std::string> keys = {
      "id", "name", "state", "owner", "progress", "best_validation", "num_trials", "created_at"};
  return keys;
}

// Memo of SummarizeConfig, keyed by the config text itself so it is right for
// any store; bounded (emptied when full: configs are small and rarely change).
struct SummaryMemo {
  std::mutex mu;
  std::unordered_map<std::string, ConfigSummary> by_text;
};
constexpr size_t kMaxMemoized = 4096;

}  // namespace

ConfigSummary SummarizeConfig(const std::string& config_yaml) {
  static SummaryMemo memo;
  {
    std::lock_guard lock(memo.mu);
    if (auto it = memo.by_text.find(config_yaml); it != memo.by_text.end()) return it->second;
  }
  ConfigSummary summary;
  if (auto config = ParseExperimentConfig(config_yaml); config.ok()) {
    summary.description = config->description;
    summary.labels = config->labels;
    summary.searcher = config->searcher.name;
    summary.metric = config->searcher.metric;
    summary.smaller_is_better = config->searcher.smaller_is_better;
    summary.max_trials = config->searcher.max_trials;
    summary.resources = config->resources;
  }
  std::lock_guard lock(memo.mu);
  if (memo.by_text.size() >= kMaxMemoized) memo.by_text.clear();
  memo.by_text.emplace(config_yaml, summary);
  return summary;
}

ConfigSummary SummarizeExperiment(const ExperimentRecord& e) {
  ConfigSummary summary = SummarizeConfig(e.config_yaml);
  if (e.description) summary.description = *e.description;
  if (e.labels) summary.labels = *e.labels;
  return summary;
}

void AddConfigSummary(nlohmann::json& view, const ConfigSummary& summary) {
  view["description"] = summary.description;
  view["labels"] = summary.labels;
  view["searcher"] = {{"name", summary.searcher},
                      {"metric", summary.metric},
                      {"smaller_is_better", summary.smaller_is_better},
                      {"max_trials", summary.max_trials}};
}

Result<ExperimentQuery> ParseExperimentQuery(const std::map<std::string, std::string>& query) {
  ExperimentQuery q;
  auto get = [&](const std::string& key) {
    auto it = query.find(key);
    return it == query.end() ? std::string() : it->second;
  };
  if (auto states = get("state"); !states.empty()) {
    size_t start = 0;
    while (start <= states.size()) {
      size_t comma = states.find(',', start);
      if (comma == std::string::npos) comma = states.size();
      const std::string one = states.substr(start, comma - start);
      if (!one.empty()) {
        auto s = ParseRunState(one);
        if (!s)
          return InvalidArgument(
              "query parameter state must be a comma-separated list of ACTIVE, PAUSED, "
              "STOPPING_COMPLETED, STOPPING_CANCELED, STOPPING_ERROR, COMPLETED, CANCELED "
              "or ERROR, got \"" +
              one.substr(0, 64) + "\"");
        q.states.insert(*s);
      }
      start = comma + 1;
    }
  }
  q.owner = get("owner");
  q.label = get("label");
  q.name = Lower(get("name"));
  if (auto archived = get("archived"); !archived.empty()) {
    if (archived == "true" || archived == "1")
      q.archived = true;
    else if (archived == "false" || archived == "0")
      q.archived = false;
    else
      return InvalidArgument("query parameter archived must be true or false, got \"" +
                             archived.substr(0, 64) + "\"");
  }
  for (auto [key, field] :
       {std::pair{"project_id", &q.project_id}, std::pair{"workspace_id", &q.workspace_id}}) {
    if (auto text = get(key); !text.empty()) {
      int64_t id = 0;
      if (!ParseInt(text, id) || id < 1)
        return InvalidArgument(std::string("query parameter ") + key + " must be a positive integer, got \"" +
                               text.substr(0, 64) + "\"");
      *field = id;
    }
  }
  if (auto sort = get("sort"); !sort.empty()) {
    if (!SortKeys().count(sort))
      return InvalidArgument(
          "query parameter sort must be one of id, name, state, owner, progress, "
          "best_validation, num_trials, created_at, got \"" +
          sort.substr(0, 64) + "\"");
    q.sort = sort;
  }
  if (auto order = get("order"); !order.empty()) {
    if (order != "asc" && order != "desc")
      return InvalidArgument("query parameter order must be asc or desc, got \"" + order.substr(0, 64) +
                             "\"");
    q.descending = order == "desc";
  }
  if (auto limit = get("limit"); !limit.empty()) {
    if (!ParseInt(limit, q.limit) || q.limit < 1 || q.limit > 1000)
      return InvalidArgument("query parameter limit must be an integer from 1 to 1000, got \"" +
                             limit.substr(0, 64) + "\"");
  }
  if (auto offset = get("offset"); !offset.empty()) {
    if (!ParseInt(offset, q.offset) || q.offset < 0)
      return InvalidArgument("query parameter offset must be a non-negative integer, got \"" +
                             offset.substr(0, 64) + "\"");
  }
  return q;
}

std::vector<ExperimentRow> SelectExperiments(std::vector<ExperimentRow> rows, const ExperimentQuery& q,
                                             const std::function<int64_t(int64_t)>& count_trials) {
  std::erase_if(rows, [&](const ExperimentRow& row) {
    const auto& e = row.record;
    if (!q.states.empty() && !q.states.count(e.state)) return true;
    if (!q.owner.empty() && e.owner != q.owner) return true;
    if (q.archived && e.archived != *q.archived) return true;
    if (!q.name.empty() && Lower(e.name).find(q.name) == std::string::npos) return true;
    if (!q.label.empty()) {
      const auto labels = SummarizeExperiment(e).labels;
      if (std::find(labels.begin(), labels.end(), q.label) == labels.end()) return true;
    }
    return false;
  });
  if (q.sort == "num_trials")
    for (auto& row : rows)
      if (row.num_trials < 0) row.num_trials = count_trials(row.record.id);
  // Ascending comparison of one column; nulls (no best validation yet) sort last either way.
  auto less = [&](const ExperimentRow& a, const ExperimentRow& b) -> int {
    const auto& x = a.record;
    const auto& y = b.record;
    auto cmp = [](const auto& l, const auto& r) { return l < r ? -1 : (r < l ? 1 : 0); };
    if (q.sort == "name") return cmp(Lower(x.name), Lower(y.name));
    if (q.sort == "state") return cmp(ToString(x.state), ToString(y.state));
    if (q.sort == "owner") return cmp(x.owner, y.owner);
    if (q.sort == "progress") return cmp(x.progress, y.progress);
    if (q.sort == "num_trials") return cmp(a.num_trials, b.num_trials);
    if (q.sort == "created_at") return cmp(x.created_at, y.created_at);
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const ExperimentRow& a, const ExperimentRow& b) {
    if (q.sort == "best_validation") {
      const auto& x = a.record.best_validation;
      const auto& y = b.record.best_validation;
      if (x.has_value() != y.has_value()) return x.has_value();  // nulls last
      if (x && y && *x != *y) return q.descending ? *x > *y : *x < *y;
    } else if (int c = less(a, b); c != 0) {
      return q.descending ? c > 0 : c < 0;
    }
    return q.descending ? a.record.id > b.record.id : a.record.id < b.record.id;
  });
  return rows;
}

nlohmann::json ExperimentFacets(const std::vector<ExperimentRow>& rows) {
  std::set<std::string> owners, labels;
  for (const auto& row : rows) {
    owners.insert(row.record.owner);
    for (const auto& l : SummarizeExperiment(row.record).labels) labels.insert(l);
  }
  return {{"owners", owners}, {"labels", labels}};
}

}  // namespace ring
