#include "master/lifecycle/trial_operations_view.h"

#include <mutex>
#include <utility>

namespace ring {

void TrialOperationsView::Publish(int64_t experiment_id, Operations operations) {
  std::unique_lock lock(mu_);
  by_experiment_.insert_or_assign(experiment_id, std::move(operations));
}

void TrialOperationsView::Forget(int64_t experiment_id) {
  std::unique_lock lock(mu_);
  by_experiment_.erase(experiment_id);
}

std::optional<TrialOperationsView::Operations> TrialOperationsView::Of(int64_t experiment_id) const {
  std::shared_lock lock(mu_);
  auto it = by_experiment_.find(experiment_id);
  if (it == by_experiment_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::optional<int64_t>> TrialOperationsView::Of(int64_t experiment_id, int64_t trial_id) const {
  std::shared_lock lock(mu_);
  auto it = by_experiment_.find(experiment_id);
  if (it == by_experiment_.end()) return std::nullopt;
  auto op = it->second.find(trial_id);
  return op == it->second.end() ? std::optional<int64_t>() : op->second;
}

}  // namespace ring
