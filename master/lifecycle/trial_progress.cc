#include "master/lifecycle/trial_progress.h"

#include <algorithm>
#include <cmath>

namespace ring {

Status TrialProgress::Record(int64_t trial_id, int64_t experiment_id,
                             const std::vector<MetricReport>& reports) {
  int64_t trained = -1;
  bool validated = false;
  for (const auto& r : reports) {
    if (r.kind == MetricKind::kTraining) trained = std::max(trained, r.batches);
    validated |= r.kind == MetricKind::kValidation;
  }
  auto trial = trials_.Get(trial_id);
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!trial.ok() || !config) return Status::Ok();
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
