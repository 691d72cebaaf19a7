#include "master/lifecycle/trial_progress.h"

#include <algorithm>
#include <cmath>

namespace ring {

void TrialProgress::ReportToSearcher(int64_t trial_id, int64_t experiment_id, const ExperimentConfig& config,
                                     const std::vector<MetricReport>& reports) {
  if (search::ContractOf(config.searcher) != search::SearcherContract::kTrialDriven) return;
  const std::string time_metric = config.searcher.time_metric.value_or("batches");
  for (const auto& r : reports) {
    if (r.kind != MetricKind::kValidation) continue;
    auto metrics = nlohmann::json::parse(r.metrics_json, nullptr, false);
    if (!metrics.is_object()) continue;
    auto v = metrics.find(config.searcher.metric);
    if (v == metrics.end() || !v->is_number() || !std::isfinite(v->get<double>())) continue;
    // Ranked by the time metric in the metrics, or by the report's batches
    // when the time metric is batches and the metrics leave it out.
    auto t = metrics.find(time_metric);
    if (t != metrics.end() && t->is_number() && std::isfinite(t->get<double>()))
      searches_.Reported(experiment_id, trial_id, t->get<double>(), v->get<double>());
    else if (time_metric == "batches")
      searches_.Reported(experiment_id, trial_id, static_cast<double>(r.batches), v->get<double>());
  }
}

Status TrialProgress::Record(int64_t trial_id, int64_t experiment_id,
                             const std::vector<MetricReport>& reports) {
  int64_t trained = -1;
  bool validated = false;
  for (const auto& r : reports) {
    if (r.kind == MetricKind::kTraining) trained = std::max(trained, r.batches);
    validated |= r.kind == MetricKind::kValidation;
  }
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!config) return Status::Ok();
  // First the searcher, which may stop the trial; the trial is read after.
  if (validated) ReportToSearcher(trial_id, experiment_id, *config, reports);
  auto trial = trials_.Get(trial_id);
  if (!trial.ok()) return Status::Ok();
  // AddMetrics raised the trial's total batches; the experiment's progress
  // moves with them (a later report's call does it if that one went further).
  if (trained >= 0 && trial->total_batches == trained) searches_.UpdateProgress(experiment_id);
  if (!validated) return Status::Ok();

  const bool smaller = config->searcher.smaller_is_better;
  const auto before = trial->best_validation;
  for (const auto& r : reports) {
    if (r.kind != MetricKind::kValidation) continue;
    auto metrics = nlohmann::json::parse(r.metrics_json, nullptr, false);
    if (!metrics.is_object()) continue;
    auto v = metrics.find(config->searcher.metric);
    if (v == metrics.end() || !v->is_number() || !std::isfinite(v->get<double>())) continue;
    const double value = v->get<double>();
    if (!trial->best_validation ||
        (smaller ? value < *trial->best_validation : value > *trial->best_validation))
      trial->best_validation = value;
  }
  if (trial->best_validation == before) return Status::Ok();
  if (Status s = trials_.Save(*trial); !s.ok()) return s;

  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return Status::Ok();
  const double v = *trial->best_validation;
  // Written only when the experiment's best moves (or its best trial's own best does).
  if (exp->best_validation && !(smaller ? v < *exp->best_validation : v > *exp->best_validation) &&
      !(exp->best_trial_id == trial->id && v != *exp->best_validation))
    return Status::Ok();
  exp->best_validation = v;
  exp->best_trial_id = trial->id;
  return store_.UpdateExperiment(*exp);
}

}  // namespace ring
