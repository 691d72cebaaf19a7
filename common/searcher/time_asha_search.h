#pragma once
// The `adaptive_asha` searcher under the trial-driven contract
// (searcher.time_metric and max_time): the brackets of PlanAdaptiveAsha, with
// rung lengths in time-metric units up to max_time, run side by side, each an
// AshaStoppingBracket. Trials get no operations: they report validations
// with the time metric, and a trial a bracket does not keep is closed, which
// the master carries out by asking it to stop (preemption). A trial with
// invalid hyperparameters is replaced, until kInvalidHparamsFactor x
// max_trials of them; then the search ends as a failure.
#include <memory>
#include <vector>

#include "common/searcher/asha_stopping_bracket.h"
#include "common/searcher/search_method.h"

namespace ring::search {

class TimeAshaSearch : public SearchMethod {
 public:
  TimeAshaSearch(const SearcherConfig& config, const std::map<std::string, Hyperparameter>& space);

  void Start(SearchContext& ctx) override;
  void ValidationCompleted(SearchContext&, RequestId, double) override {}
  void MetricsReported(SearchContext& ctx, RequestId id, double time, double metric) override;
  void TrialClosed(SearchContext& ctx, RequestId id) override;
  void TrialFinished(SearchContext& ctx, RequestId id) override;
  void TrialExitedEarly(SearchContext& ctx, RequestId id, ExitReason reason) override;

  bool Finished() const override;
  double PlannedBatches() const override { return 0; }
  double PlannedTrials() const override { return static_cast<double>(max_trials_); }
  int Bracket(RequestId id) const override;

  nlohmann::json Snapshot() const override;
  void Restore(const nlohmann::json& state, const TrialTable& trials) override;

 private:
  AshaStoppingBracket* Find(RequestId id);

  int64_t max_trials_;
  std::vector<AshaStoppingBracket> brackets_;
  int64_t invalid_ = 0;  // trials that reported invalid hyperparameters
  bool gave_up_ = false;
};

}  // namespace ring::search
