// ExperimentController: calls of trial processes, authorised by their
// allocation token — metric reports and the model definition download.
#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "master/core/experiment_controller.h"
#include "master/core/json_fields.h"
#include "master/core/tokens.h"

namespace ring {
namespace {

Status ParseReports(const nlohmann::json& body, int64_t trial_id, const std::string& allocation_id,
                    std::vector<MetricReport>& out) {
  if (!body.is_object() || !body.contains("reports") || !body["reports"].is_array())
    return InvalidArgument("body must be an object with a \"reports\" array");
  if (Status s = CheckKnownFields(body, {"reports"}, "the request body"); !s.ok()) return s;
  const auto& reports = body["reports"];
  if (reports.size() > 10000) return {ErrorCode::kTooLarge, "reports holds over 10000 entries"};
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    const std::string at = "reports[" + std::to_string(i) + "]";
    if (!r.is_object()) return InvalidArgument(at + " must be an object");
    if (Status s = CheckKnownFields(r, {"kind", "batches", "metrics"}, at); !s.ok()) return s;
    if (!r.contains("kind") || !r["kind"].is_string() ||
        (r["kind"] != "training" && r["kind"] != "validation"))
      return InvalidArgument(at + ".kind must be \"training\" or \"validation\"");
    if (!r.contains("batches") || !r["batches"].is_number_integer() || r["batches"].get<int64_t>() < 0)
      return InvalidArgument(at + ".batches must be a non-negative integer");
    if (!r.contains("metrics") || !r["metrics"].is_object())
      return InvalidArgument(at + ".metrics must be an object of metric names to numbers");
    for (const auto& [name, value] : r["metrics"].items())
      if (!value.is_number() && !value.is_null())
        return InvalidArgument(at + ".metrics." + name + " must be a number");
    MetricReport m;
    m.trial_id = trial_id;
    m.kind = r["kind"].get<std::string>();
    m.batches = r["batches"].get<int64_t>();
    m.metrics_json = r["metrics"].dump();
    m.allocation_id = allocation_id;
    out.push_back(std::move(m));
  }
  return Status::Ok();
}

}  // namespace

Result<LiveAllocation*> ExperimentController::AuthorizeLocked(const std::string& allocation_id,
                                                              const std::string& token) {
  auto it = live_.find(allocation_id);
  if (it == live_.end()) {
    auto rec = store_.GetAllocation(allocation_id);
    if (!rec.ok()) return NotFound("allocation " + allocation_id + " does not exist");
    if (token.empty() || !TokenMatches(token, rec->token_hash))
      return Status(ErrorCode::kUnauthenticated, "the allocation token is missing or wrong");
    return Conflict("allocation " + allocation_id + " has ended (" + rec->exit_reason + ")");
  }
  if (token.empty() || it->second.record.token_hash.empty() ||
      !TokenMatches(token, it->second.record.token_hash))
    return Status(ErrorCode::kUnauthenticated, "the allocation token is missing or wrong");
  return &it->second;
}

Status ExperimentController::AuthorizeAllocation(const std::string& allocation_id, const std::string& token) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  return alloc.ok() ? Status::Ok() : alloc.status();
}

void ExperimentController::UpdateBestLocked(TrialRecord& trial, const ExperimentConfig& config,
                                            double value) {
  const bool smaller = config.searcher.smaller_is_better;
  if (!trial.best_validation || (smaller ? value < *trial.best_validation : value > *trial.best_validation))
    trial.best_validation = value;
}

Result<int64_t> ExperimentController::ReportMetrics(const std::string& allocation_id,
                                                    const std::string& token, const nlohmann::json& body) {
  int64_t trial_id = 0, experiment_id = 0;
  {
    std::lock_guard lock(mu_);
    auto alloc = AuthorizeLocked(allocation_id, token);
    if (!alloc.ok()) return alloc.status();
    trial_id = (*alloc)->record.trial_id;
    experiment_id = (*alloc)->experiment_id;
  }
  std::vector<MetricReport> reports;
  if (Status s = ParseReports(body, trial_id, allocation_id, reports); !s.ok()) return s;
  // Stored outside the controller's lock: the commit waits for the disk, and
  // scheduling, heartbeats and other routes need not wait with it. A report
  // authorized just before its allocation ended is still stored, as it would
  // have been had it arrived a moment earlier.
  auto stored = store_.AddMetrics(reports);
  if (!stored.ok()) return stored.status();
  std::lock_guard lock(mu_);
  if (Status s = RecordProgressLocked(trial_id, experiment_id, reports); !s.ok()) return s;
  return stored;
}

Status ExperimentController::RecordProgressLocked(int64_t trial_id, int64_t experiment_id,
                                                  const std::vector<MetricReport>& reports) {
  int64_t trained = -1;
  bool validated = false;
  for (const auto& r : reports) {
    if (r.kind == "training") trained = std::max(trained, r.batches);
    validated |= r.kind == "validation";
  }
  auto trial = store_.GetTrial(trial_id);
  const ExperimentConfig* config = ConfigLocked(experiment_id);
  if (!trial.ok() || !config) return Status::Ok();
  // AddMetrics raised the trial's total batches; the experiment's progress
  // moves with them (a later report's call does it if that one went further).
  if (trained >= 0 && trial->total_batches == trained) UpdateProgressLocked(experiment_id);
  if (!validated) return Status::Ok();

  const auto before = trial->best_validation;
  for (const auto& r : reports) {
    if (r.kind != "validation") continue;
    auto metrics = nlohmann::json::parse(r.metrics_json);
    auto v = metrics.find(config->searcher.metric);
    if (v != metrics.end() && v->is_number() && std::isfinite(v->get<double>()))
      UpdateBestLocked(*trial, *config, v->get<double>());
  }
  if (trial->best_validation == before) return Status::Ok();
  if (Status s = store_.UpdateTrial(*trial); !s.ok()) return s;

  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return Status::Ok();
  const bool smaller = config->searcher.smaller_is_better;
  const double v = *trial->best_validation;
  // Written only when the experiment's best moves (or its best trial's own best does).
  if (exp->best_validation && !(smaller ? v < *exp->best_validation : v > *exp->best_validation) &&
      !(exp->best_trial_id == trial->id && v != *exp->best_validation))
    return Status::Ok();
  exp->best_validation = v;
  exp->best_trial_id = trial->id;
  return store_.UpdateExperiment(*exp);
}

Result<std::string> ExperimentController::ModelDefinition(const std::string& allocation_id,
                                                          const std::string& token) {
  int64_t experiment_id = 0;
  {
    std::lock_guard lock(mu_);
    auto alloc = AuthorizeLocked(allocation_id, token);
    if (!alloc.ok()) return alloc.status();
    experiment_id = (*alloc)->experiment_id;
  }
  return store_.GetModelDefinition(experiment_id);
}

}  // namespace ring
