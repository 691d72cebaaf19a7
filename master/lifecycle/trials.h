#pragma once
// Trials: the only writer of a trial's state. Every change of state goes
// through Transition, which checks the lifecycle table, stamps the end time
// and writes the record before anything acts on it. Other fields (restarts,
// best validation, latest checkpoint) are written by their owners through
// Save, which never changes the state. Used on the lifecycle's executor.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "master/store/store.h"

namespace ring {

class Trials {
 public:
  explicit Trials(Store& store) : store_(store) {}
  Result<TrialRecord> Get(int64_t trial_id) { return store_.GetTrial(trial_id); }
  Result<std::vector<TrialRecord>> OfExperiment(int64_t experiment_id) {
    return store_.ListTrials(experiment_id);
  }
  // A new trial's record (not yet stored: the searcher's step writes it).
  // `warm_start`: the experiment's warm start checkpoint, the trial's latest
  // until it registers one of its own (empty: none).
  static TrialRecord New(int64_t experiment_id, int64_t request_id, std::string hparams_json, int64_t seed,
                         RunState initial, std::string warm_start = "");
  // Moves `trial` to `to` and writes it (with its other fields); a no-op
  // when it is already there.
  Status Transition(TrialRecord& trial, RunState to);
  // Writes every field but the state, which must be the stored one.
  Status Save(const TrialRecord& trial);
  // Continuing in place: an ended trial trains again, ACTIVE with its
  // restarts reset (the one way out of a terminal state; states.h).
  Status Reopen(TrialRecord& trial);
  // Moves the experiment's trials that are not ended, not in `to` and not in
  // `running` to `to` (pause and kill of trials with nothing running).
  Status TransitionIdle(int64_t experiment_id, RunState to, const std::set<int64_t>& running);

 private:
  Store& store_;
};

}  // namespace ring
