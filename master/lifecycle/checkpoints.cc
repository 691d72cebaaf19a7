#include "master/lifecycle/checkpoints.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/thread_role.h"
#include "master/files/checkpoint_folder.h"
#include "master/lifecycle/warm_start.h"
#include "master/maintenance/checkpoint_gc.h"

namespace ring {
namespace {

// A random (version 4) uuid, 122 bits from the system's entropy source.
std::string NewUuid() {
  std::random_device rd;
  uint64_t hi = (static_cast<uint64_t>(rd()) << 32) | rd();
  uint64_t lo = (static_cast<uint64_t>(rd()) << 32) | rd();
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    const uint64_t word = i < 16 ? hi : lo;
    out += kHex[(word >> (60 - 4 * (i % 16))) & 15];
    if (i == 7 || i == 11 || i == 15 || i == 19) out += '-';
  }
  return out;
}

constexpr const char* kManifest = ".ring-checkpoint.json";

}  // namespace

std::string Checkpoints::Dir(const CheckpointRecord& c) {
  std::filesystem::path dir = c.storage.host_path;
  if (!c.storage.storage_path.empty()) dir /= c.storage.storage_path;
  return (dir / c.uuid).string();
}

Result<CheckpointReservation> Checkpoints::Prepare(int64_t experiment_id, int64_t trial_id,
                                                   const std::string& allocation_id) {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!config) return Internal("the experiment's config cannot be read");
  CheckpointReservation r;
  r.uuid = NewUuid();
  r.trial_id = trial_id;
  r.allocation_id = allocation_id;
  r.storage = settings_.StorageOf(*config);
  CheckOffIoThread("creating checkpoint folders");
  if (Status s = EnsureCheckpointParent(settings_.roots(), r.storage); !s.ok())
    return Status(s.code(), "the checkpoint storage folder cannot be made ready: " + s.message());
  if (Status s = store_.ReserveCheckpoint(r); !s.ok()) return s;
  return r;
}

Result<bool> Checkpoints::Register(int64_t experiment_id, CheckpointRecord c) {
  if (auto existing = store_.GetCheckpoint(c.uuid); existing.ok()) {  // a retried registration
    if (Status s = store_.AddCheckpoint(c); !s.ok()) return s;
    SpendReservation(c.uuid);
    if (existing->state == CheckpointState::kActive)
      if (Status s = MakeLatest(*existing); !s.ok()) return s;
    return false;
  }
  if (!IsCheckpointUuid(c.uuid))
    return InvalidArgument("uuid \"" + c.uuid +
                           "\" was not issued by the master: ask POST "
                           "/api/v1/allocations/{id}/checkpoints/prepare for one");
  auto issued = store_.GetCheckpointReservation(c.uuid);
  if (!issued.ok() || issued->allocation_id != c.allocation_id || issued->trial_id != c.trial_id)
    return InvalidArgument("uuid " + c.uuid + " was not issued to allocation " + c.allocation_id +
                           ": ask POST /api/v1/allocations/{id}/checkpoints/prepare for one");
  std::set<std::string> paths;
  for (const auto& f : c.resources) {
    if (!paths.insert(f.path).second) return InvalidArgument("resources name " + f.path + " twice");
    if (f.path == kManifest) return InvalidArgument(std::string("resources must not name ") + kManifest);
  }
  for (const auto& f : c.resources)  // "a" and "a/b" cannot both be files
    if (std::any_of(paths.begin(), paths.end(), [&](const std::string& p) {
          return p.size() > f.path.size() && p.compare(0, f.path.size(), f.path) == 0 &&
                 p[f.path.size()] == '/';
        }))
      return InvalidArgument("resources name " + f.path + " both as a file and as a folder");
  c.storage = issued->storage;
  CheckOffIoThread("checking a checkpoint's files");
  auto folder = OpenCheckpointFolder(settings_.roots(), c.storage, c.uuid);
  if (!folder.ok())
    return InvalidArgument(
        "checkpoint " + c.uuid +
        " is not a folder the runtime wrote below an allowed root: " + folder.status().message());
  if (Status s = CheckRegisteredFiles(folder->get(), c.resources); !s.ok())
    return InvalidArgument("checkpoint " + c.uuid + ": " + s.message());
  if (Status s = store_.AddCheckpoint(c); !s.ok()) return s;
  SpendReservation(c.uuid);
  if (Status s = MakeLatest(c); !s.ok()) return s;
  spdlog::info("[checkpoints] experiment {} trial {} allocation {}: checkpoint {} at {} batches registered",
               experiment_id, c.trial_id, c.allocation_id, c.uuid, c.batches);
  return true;
}

Status Checkpoints::MakeLatest(const CheckpointRecord& c) {
  auto trial = trials_.Get(c.trial_id);
  if (!trial.ok()) return trial.status();
  if (trial->latest_checkpoint == c.uuid) return Status::Ok();
  // The trial's first checkpoint of its own is newer than a warm start's
  // source, whatever their batches.
  bool newer = trial->latest_checkpoint.empty();
  if (!newer) {
    auto latest = store_.GetCheckpoint(trial->latest_checkpoint);
    newer = !latest.ok() || latest->trial_id != c.trial_id || c.batches >= latest->batches;
  }
  if (!newer) return Status::Ok();
  trial->latest_checkpoint = c.uuid;
  return trials_.Save(*trial);
}

void Checkpoints::SpendReservation(const std::string& uuid) {
  if (!store_.GetCheckpointReservation(uuid).ok()) return;
  if (Status s = store_.DeleteCheckpointReservation(uuid); !s.ok())
    spdlog::warn("[checkpoints] checkpoint {}: {}", uuid, s.message());
}

Result<CheckpointRecord> Checkpoints::OfTrial(int64_t trial_id, const std::string& uuid) {
  return RestorableCheckpoint(store_, trial_id, uuid);
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
  auto warm_starts = store_.ListLiveWarmStarts();
  if (!warm_starts.ok()) return;
  const std::set<std::string> sources(warm_starts->begin(), warm_starts->end());
  auto versions = store_.ListModelVersionCheckpoints();
  if (!versions.ok()) return;
  const std::set<std::string> registered(versions->begin(), versions->end());
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
                    c.uuid == trial.latest_checkpoint,
                    sources.contains(c.uuid),
                    registered.contains(c.uuid)};
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
    // Below an allowed root, without following links: a folder replaced by
    // a link loses the link, never what it points to.
    if (Status s = RemoveCheckpointFolder(settings_.roots(), records[uuid].storage, uuid); !s.ok()) {
      spdlog::warn("[checkpoints] checkpoint {}: cannot delete {}: {}", uuid, dir, s.message());
      continue;
    }
    if (Status s = store_.SetCheckpointState(uuid, CheckpointState::kDeleted); !s.ok())
      spdlog::warn("[checkpoints] checkpoint {}: {}", uuid, s.message());
    else
      spdlog::info("[checkpoints] checkpoint {} garbage collected", uuid);
  }
}

void Checkpoints::Release(const std::string& uuid) {
  auto c = store_.GetCheckpoint(uuid);
  if (!c.ok()) return;
  auto trial = trials_.Get(c->trial_id);
  if (!trial.ok()) return;
  Collect(trial->experiment_id);
}

}  // namespace ring
