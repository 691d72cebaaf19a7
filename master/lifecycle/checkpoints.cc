#include "master/lifecycle/checkpoints.h"

#include <filesystem>
#include <map>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/thread_role.h"
#include "master/maintenance/checkpoint_gc.h"

namespace ring {

std::string Checkpoints::Dir(const CheckpointRecord& c) {
  std::filesystem::path dir = c.storage.host_path;
  if (!c.storage.storage_path.empty()) dir /= c.storage.storage_path;
  return (dir / c.uuid).string();
}

Result<bool> Checkpoints::Register(int64_t experiment_id, CheckpointRecord c) {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!config) return Internal("the experiment's config cannot be read");
  c.storage = settings_.StorageOf(*config);
  const bool existed = store_.GetCheckpoint(c.uuid).ok();
  if (Status s = store_.AddCheckpoint(c); !s.ok()) return s;
  if (existed) return false;

  auto trial = trials_.Get(c.trial_id);
  if (!trial.ok()) return trial.status();
  bool newer = trial->latest_checkpoint.empty();
  if (!newer) {
    auto latest = store_.GetCheckpoint(trial->latest_checkpoint);
    newer = !latest.ok() || c.batches >= latest->batches;
  }
  if (newer) {
    trial->latest_checkpoint = c.uuid;
    if (Status s = trials_.Save(*trial); !s.ok()) return s;
  }
  spdlog::info("[checkpoints] trial {} allocation {}: checkpoint {} at {} batches registered", c.trial_id,
               c.allocation_id, c.uuid, c.batches);
  return true;
}

Result<CheckpointRecord> Checkpoints::OfTrial(int64_t trial_id, const std::string& uuid) {
  auto c = store_.GetCheckpoint(uuid);
  if (!c.ok() || c->trial_id != trial_id)
    return NotFound("checkpoint " + uuid + " does not belong to this trial");
  return c;
}

void Checkpoints::Collect(int64_t experiment_id) {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  auto trials = trials_.OfExperiment(experiment_id);
  if (!config || !trials.ok()) return;
  GcPolicy policy;
  if (config->checkpoint_storage) {
    policy.save_experiment_best = config->checkpoint_storage->save_experiment_best;
    policy.save_trial_best = config->checkpoint_storage->save_trial_best;
    policy.save_trial_latest = config->checkpoint_storage->save_trial_latest;
  }
  policy.smaller_is_better = config->searcher.smaller_is_better;
  std::vector<GcCandidate> candidates;
  std::map<std::string, CheckpointRecord> records;
  for (const auto& trial : *trials) {
    auto checkpoints = store_.ListCheckpoints(trial.id);
    auto validation = store_.GetMetrics(trial.id, MetricKind::kValidation);
    if (!checkpoints.ok() || !validation.ok()) return;
    for (const auto& c : *checkpoints) {
      if (c.state != CheckpointState::kActive) continue;
      GcCandidate g{c.uuid,
                    trial.id,
                    c.batches,
                    std::nullopt,
                    IsTerminal(trial.state),
                    c.uuid == trial.latest_checkpoint};
      for (const auto& m : *validation) {  // the last validation at or before the checkpoint
        if (m.batches > c.batches) break;
        auto v = nlohmann::json::parse(m.metrics_json, nullptr, false);
        if (v.is_object() && v.contains(config->searcher.metric) && v[config->searcher.metric].is_number())
          g.metric = v[config->searcher.metric].get<double>();
      }
      candidates.push_back(g);
      records[c.uuid] = c;
    }
  }
  for (const auto& uuid : CheckpointsToDelete(candidates, policy)) {
    const std::string dir = Dir(records[uuid]);
    CheckOffIoThread("deleting a checkpoint");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // already missing is fine
    if (ec) {
      spdlog::warn("[checkpoints] checkpoint {}: cannot delete {}: {}", uuid, dir, ec.message());
      continue;
    }
    if (Status s = store_.SetCheckpointState(uuid, CheckpointState::kDeleted); !s.ok())
      spdlog::warn("[checkpoints] checkpoint {}: {}", uuid, s.message());
    else
      spdlog::info("[checkpoints] checkpoint {} garbage collected", uuid);
  }
}

}  // namespace ring
