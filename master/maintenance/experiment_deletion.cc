#include "master/maintenance/experiment_deletion.h"

#include <spdlog/spdlog.h>

#include "master/files/checkpoint_folder.h"

namespace ring {

Status CheckNoModelVersions(Store& store, int64_t id) {
  auto versions = store.ListExperimentModelVersions(id);
  if (!versions.ok()) return versions.status();
  if (versions->empty()) return Status::Ok();
  std::string named;
  for (const auto& v : *versions) {
    if (!named.empty()) named += ", ";
    named += "checkpoint " + v.checkpoint_uuid + " is version " + std::to_string(v.version) + " of model " +
             v.model;
  }
  const auto& first = versions->front();
  return Conflict("experiment " + std::to_string(id) + " cannot be deleted: " + named +
                  "; delete those versions first (ring model delete-version " + first.model + " " +
                  std::to_string(first.version) + ")");
}

Status DeleteExperimentNow(Store& store, const CheckpointRoots& roots, int64_t id) {
  if (Status s = CheckNoModelVersions(store, id); !s.ok()) return s;
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
