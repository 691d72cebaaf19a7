#pragma once
// Experiments: create, pause, activate, kill, archive, and the end of an
// experiment once its trials have ended. The experiment's state changes in
// one function (Transition) along the table of common/states.h. Used on
// the lifecycle's executor only.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "master/lifecycle/allocations.h"
#include "master/lifecycle/checkpoints.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/rank_events.h"
#include "master/lifecycle/searches.h"
#include "master/lifecycle/trials.h"
#include "master/lifecycle/warm_start.h"
#include "master/scheduler/pool_settings.h"

namespace ring {

class Experiments {
 public:
  Experiments(Store& store, ExperimentSettings& settings, Trials& trials, Allocations& allocations,
              Searches& searches, RankEvents& ranks, ResourceManager& rm,
              const std::vector<PoolSettings>& pools, uint64_t max_model_bytes,
              std::vector<std::string> own_dirs = {});
  // Everything Create checks of a config, creating nothing: the config's own
  // errors and warnings, then what only the master knows (checkpoint storage
  // roots, whether the pool exists and can run the slots, the searcher, the
  // warm start's source and whether `who` may start from it).
  ConfigCheck Check(const std::string& config_yaml, const Submitter& who) const;
  // Validates the config and the model, records the experiment (owned by
  // who.username, with its resolved warm start) and runs its searcher's
  // first step. `warnings`, when given, receives the config's.
  // `parent_id`: the experiment it is forked from.
  Result<int64_t> Create(const std::string& config_yaml, const std::string& model_tar_gz, bool activate,
                         const Submitter& who, std::vector<ConfigIssue>* warnings = nullptr,
                         std::optional<int64_t> parent_id = std::nullopt);
  Status Kill(int64_t experiment_id);
  // Running trials checkpoint and exit; waiting ones leave the queue.
  Status Pause(int64_t experiment_id, SteadyTime now);
  // Paused trials go back in the queue from their latest checkpoints.
  Status Activate(int64_t experiment_id);
  Status SetArchived(int64_t experiment_id, bool archived);
  // Continues an ended single-trial experiment's trial in place: the config
  // rewritten with the new length (already checked against the trial's
  // latest checkpoint), a fresh searcher whose one trial is this one, the
  // trial and then the experiment ACTIVE again, and the trial queued from
  // its latest checkpoint. kConflict (409) naming what stands in the
  // way (an experiment still running, another searcher, no checkpoint).
  Status ContinueTrial(int64_t trial_id, const std::string& config_yaml);
  // Ends the experiment when its trials have all ended and its searcher
  // will make no more.
  void FinishIfDone(int64_t experiment_id);
  // Called with each experiment that has just ended (after it is written).
  void OnEnded(std::function<void(const ExperimentRecord&)> handler) { on_ended_ = std::move(handler); }
  // Called with each state change (after it is written) and the state before.
  using StateHandler = std::function<void(const ExperimentRecord&, RunState from)>;
  void OnStateChanged(StateHandler handler) { on_state_changed_ = std::move(handler); }

 private:
  Status Transition(ExperimentRecord& exp, RunState to);
  std::set<int64_t> LiveTrials(int64_t experiment_id) const;

  Store& store_;
  ExperimentSettings& settings_;
  Trials& trials_;
  Allocations& allocations_;
  Searches& searches_;
  RankEvents& ranks_;
  ResourceManager& rm_;
  // Ok when the config has no image, or its pool can run it; else an
  // error naming environment.image and its line, and the pool.
  Status CheckImage(const ExperimentConfig& config) const;
  // Ok unless a bind mount reaches one of own_dirs_; else an error naming it and its line.
  Status CheckBindMounts(const ExperimentConfig& config) const;

  const std::vector<std::string> declared_pools_;
  const std::map<std::string, std::string> pool_runtimes_;  // pool -> its container_runtime
  const std::vector<std::string> own_dirs_;                 // the master's folders
  const uint64_t max_model_bytes_;
  std::function<void(const ExperimentRecord&)> on_ended_;
  StateHandler on_state_changed_;
};

}  // namespace ring
