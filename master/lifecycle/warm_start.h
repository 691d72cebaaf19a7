#pragma once
// Warm start (searcher.source_trial_id / searcher.source_checkpoint_uuid):
// which registered checkpoint an experiment's trials start from, and whether
// its submitter may start from it. Resolved once, at submit, into the uuid
// the experiment keeps (ExperimentRecord::warm_start_checkpoint), so that
// later checkpoints of a source trial do not change what new trials start
// from. Reads the store only; used on the lifecycle's executor.
#include <string>

#include "common/experiment_config.h"
#include "master/store/store.h"

namespace ring {

// Who submits, and the master's reading rule for other users' experiments:
// the rule of checkpoint downloads (master.yaml experiments_team_readable).
struct Submitter {
  std::string username = "default";
  bool admin = false;
  bool team_readable = true;
  // The project the experiment goes to (checked by the REST API: the
  // submitter belongs to its workspace).
  int64_t project_id = kDefaultProjectId;
};

// The uuid the config's trials start from; empty when it names no source.
// Refused, each as "experiment.yaml:<line>: searcher.<key> ...":
//  - kInvalidConfig: the trial does not exist or has no completed checkpoint
//    of its own; the uuid names no registered checkpoint, or one that was
//    garbage collected;
//  - kPermissionDenied: the source's experiment belongs to another user and
//    the submitter is no admin and experiments are not team-readable; or the
//    pool's agents run trials as their owners' Unix accounts and the
//    submitter's trials would run as another account than the one that
//    wrote the checkpoint, which cannot read it (docs/operations.md,
//    "Checkpoint folders").
Result<std::string> ResolveWarmStart(Store& store, const ExperimentConfig& config, const Submitter& who);

// A checkpoint trial `trial_id` may restore: one of its own, or the one its
// experiment warm-starts from; kNotFound otherwise. Reads the store only
// (thread-safe: the trial API calls it on the io threads).
Result<CheckpointRecord> RestorableCheckpoint(Store& store, int64_t trial_id, const std::string& uuid);

}  // namespace ring
