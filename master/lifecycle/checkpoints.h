#pragma once
// Checkpoints: registration by trials (after the files are completely
// written), lookup for a restore, and garbage collection when a trial or
// experiment ends, or an experiment warm-started from one. Used on the
// lifecycle's executor only (never an io thread: collection deletes folders).
#include <string>

#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/trials.h"
#include "master/store/store.h"

namespace ring {

class Checkpoints {
 public:
  Checkpoints(Store& store, ExperimentSettings& settings, Trials& trials)
      : store_(store), settings_(settings), trials_(trials) {}
  // Where a checkpoint's files are, from its storage description.
  static std::string Dir(const CheckpointRecord& c);
  // Issues a new checkpoint uuid to an allocation of trial `trial_id` and
  // makes sure the experiment's storage folder exists (creating missing
  // levels below its allowed root with the shared folder mode). The trial
  // writes <storage>/<uuid> and then registers it.
  Result<CheckpointReservation> Prepare(int64_t experiment_id, int64_t trial_id,
                                        const std::string& allocation_id);
  // Registers `c` (uuid, batches, files and metadata, validated by the API)
  // for a trial of experiment `experiment_id`; true when newly stored. Only
  // a uuid issued to that allocation by Prepare, whose folder is a real
  // folder (no link) below an allowed root holding each registered file
  // (regular, one link, its size). The trial's latest checkpoint moves to it
  // unless it has a later one. A retried registration (false) finishes what
  // a master stopped after storing it left undone: the trial's latest
  // checkpoint and the spent reservation.
  Result<bool> Register(int64_t experiment_id, CheckpointRecord c);
  // A checkpoint of `trial_id`, or its experiment's warm start source, for
  // verifying a restore; kNotFound otherwise.
  Result<CheckpointRecord> OfTrial(int64_t trial_id, const std::string& uuid);
  // Deletes what the experiment's policy does not keep: registered
  // checkpoints only, inside the allowed roots, never following a link, and
  // never one an experiment that has not ended warm-starts from, nor a
  // model version.
  void Collect(int64_t experiment_id);
  // An experiment that warm-started from `uuid` has ended, or `uuid` is no
  // longer a model version: collects its experiment again, which may now
  // delete it.
  void Release(const std::string& uuid);

 private:
  // Points c's trial at c unless it has a later checkpoint of its own.
  Status MakeLatest(const CheckpointRecord& c);
  // Drops the reservation of a registered checkpoint, if it is still there.
  void SpendReservation(const std::string& uuid);

  Store& store_;
  ExperimentSettings& settings_;
  Trials& trials_;
};

}  // namespace ring
