#pragma once
// Which checkpoints garbage collection deletes: a pure function of the
// experiment's checkpoints, their trials' states and the retention policy
// (checkpoint_storage.save_experiment_best, save_trial_best, save_trial_latest).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ring {

struct GcCandidate {
  std::string uuid;
  int64_t trial_id = 0;
  int64_t batches = 0;
  std::optional<double> metric;    // validation metric reported at (or before) its batches
  bool trial_ended = false;        // trial is COMPLETED, CANCELED or ERROR
  bool latest_of_trial = false;    // the trial's resume point
  bool warm_start_source = false;  // an experiment that has not ended starts its trials from it
  bool model_version = false;      // a version of a model in the registry
};

struct GcPolicy {
  int64_t save_experiment_best = 0;
  int64_t save_trial_best = 1;
  int64_t save_trial_latest = 1;
  bool smaller_is_better = true;
};

// The uuids to delete. Never one a trial that has not ended may resume from,
// nor the warm start source of an experiment that has not ended, nor a
// model version.
std::vector<std::string> CheckpointsToDelete(const std::vector<GcCandidate>& candidates,
                                             const GcPolicy& policy);

}  // namespace ring
