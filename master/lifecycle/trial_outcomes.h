#pragma once
// What an ended allocation means for its trial: gathers the typed facts
// (experiment state, end cause, exits, preemption, the searcher's verdict,
// restarts left), asks DecideOutcome (allocation_outcome.h, the numbered
// rules of docs/failure-model.md) and carries the outcome out: the trial's
// transition, a requeue from its latest checkpoint, the searcher's notice,
// checkpoint collection and the experiment's end. Used on the lifecycle's
// executor only.
#include <functional>

#include "master/lifecycle/allocations.h"
#include "master/lifecycle/checkpoints.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/log_policies.h"
#include "master/lifecycle/searches.h"
#include "master/lifecycle/trials.h"

namespace ring {

class Experiments;

class TrialOutcomes {
 public:
  TrialOutcomes(Store& store, ExperimentSettings& settings, Trials& trials, Allocations& allocations,
                Searches& searches, Checkpoints& checkpoints, Experiments& experiments,
                LogPolicies& log_policies, std::function<void()> on_restart);
  void OnAllocationEnded(const LiveAllocation& alloc);
  // Kills one trial of an active or paused experiment (its owner's or an
  // admin's choice): a running or queued allocation of it stops USER_KILL
  // and its end cancels the trial (rule F1); a trial with nothing running
  // (paused, waiting for a promotion) is canceled at once. Either way the
  // searcher hears it was canceled, as Determined's searchers hear of a
  // trial that exited early, and the experiment goes on with the others. A
  // trial that has ended is left as it is.
  Status Kill(int64_t trial_id);

 private:
  Store& store_;
  ExperimentSettings& settings_;
  Trials& trials_;
  Allocations& allocations_;
  Searches& searches_;
  Checkpoints& checkpoints_;
  Experiments& experiments_;
  LogPolicies& log_policies_;
  std::function<void()> on_restart_;
};

}  // namespace ring
