#include "master/maintenance/experiment_deletion.h"

#include <spdlog/spdlog.h>

#include "master/files/checkpoint_folder.h"

namespace ring {

Status DeleteExperimentNow(Store& store, const CheckpointRoots& roots, int64_t id) {
  auto trials = store.ListTrials(id);
  if (!trials.ok()) return trials.status();
  size_t removed = 0;
  for (const auto& trial : *trials) {
    auto checkpoints = store.ListCheckpoints(trial.id);
    if (!checkpoints.ok()) return checkpoints.status();
    for (const auto& c : *checkpoints) {
      if (Status s = RemoveCheckpointFolder(roots, c.storage, c.uuid); !s.ok())
        return Status(s.code(), "experiment " + std::to_string(id) + ": cannot remove checkpoint " + c.uuid +
                                    ": " + s.message() + " (the deletion is tried again at the next start)");
      ++removed;
    }
  }
  if (Status s = store.DeleteExperiment(id); !s.ok()) return s;
  spdlog::info("[experiments] experiment {} deleted: {} trials, {} checkpoint folders", id, trials->size(),
               removed);
  return Status::Ok();
}

}  // namespace ring
