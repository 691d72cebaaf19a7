#include "cli/queries.h"

#include "cli/format.h"
#include "common/states.h"

namespace ring::cli {

constexpr int64_t kPageSize = 200;
constexpr int64_t kMaxPages = 1000;

Result<nlohmann::json> FetchAllTrials(MasterClient& master, int64_t experiment_id) {
  nlohmann::json all = nlohmann::json::array();
  for (int64_t page = 0; page < kMaxPages; ++page) {
    auto res = master.Get("/api/v1/experiments/" + std::to_string(experiment_id) + "/trials?limit=" +
                          std::to_string(kPageSize) + "&offset=" + std::to_string(all.size()));
    if (!res.ok()) return res.status();
    const auto& trials = Member(*res, "trials");
    if (!trials.is_array()) return Internal("the master's trial list has no \"trials\" array");
    for (const auto& t : trials) all.push_back(t);
    int64_t total = GetInt(*res, "total", static_cast<int64_t>(all.size()));
    if (trials.empty() || static_cast<int64_t>(all.size()) >= total) break;
  }
  return all;
}

Result<nlohmann::json> LatestMetrics(MasterClient& master, int64_t trial_id, const std::string& kind) {
  auto res = master.Get("/api/v1/trials/" + std::to_string(trial_id) + "/metrics?kind=" + kind);
  if (!res.ok()) return res.status();
  nlohmann::json best = nullptr;
  const auto& metrics = Member(*res, "metrics");
  if (!metrics.is_array()) return best;
  for (const auto& m : metrics) {
    if (!m.is_object()) continue;
    if (best.is_null() || GetInt(m, "batches") >= GetInt(best, "batches")) best = m;
  }
  return best;
}

bool IsTerminalState(const std::string& state) {
  auto s = ParseRunState(state);
  return s && IsTerminal(*s);
}

}  // namespace ring::cli
