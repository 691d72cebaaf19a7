#pragma once
// What a trial's stored metric reports move: the experiment's progress, the
// trial's and experiment's best validation of the searcher metric, each
// written only when it moved, and, under the trial-driven searcher
// contract, the searcher's decisions (it ranks validations by time metric). Used on the lifecycle's executor
// only, after the reports themselves were committed (off it, in a group commit).
#include <vector>

#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/searches.h"
#include "master/lifecycle/trials.h"

namespace ring {

class TrialProgress {
 public:
  TrialProgress(Store& store, ExperimentSettings& settings, Trials& trials, Searches& searches)
      : store_(store), settings_(settings), trials_(trials), searches_(searches) {}
  Status Record(int64_t trial_id, int64_t experiment_id, const std::vector<MetricReport>& reports);

 private:
  // Trial-driven contract: each validation with the searcher metric goes to
  // the searcher with its time metric (docs/searchers.md).
  void ReportToSearcher(int64_t trial_id, int64_t experiment_id, const ExperimentConfig& config,
                        const std::vector<MetricReport>& reports);

  Store& store_;
  ExperimentSettings& settings_;
  Trials& trials_;
  Searches& searches_;
};

}  // namespace ring
