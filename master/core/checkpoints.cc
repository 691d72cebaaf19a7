// ExperimentController: checkpoints (registration by trials, lookup, garbage
// collection) and preemption requests seen by trials.
#include <filesystem>
#include <regex>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "master/core/checkpoint_gc.h"
#include "master/core/experiment_controller.h"
#include "master/core/json_fields.h"

namespace ring {
namespace {

bool IsHex(const std::string& s, size_t len) {
  return s.size() == len && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool SafeRelative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const auto& part : std::filesystem::path(path))
    if (part == "..") return false;
  return true;
}

// Whether `j` nests deeper than `limit`, found without recursion: copying or
// writing out a value nested deeper than the stack allows would crash.
bool NestsDeeperThan(const nlohmann::json& j, int limit) {
  std::vector<std::pair<const nlohmann::json*, int>> pending{{&j, 0}};
  while (!pending.empty()) {
    const auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    if (depth >= limit) return true;
    for (const auto& child : *value) pending.emplace_back(&child, depth + 1);
  }
  return false;
}

Status ParseCheckpoint(const nlohmann::json& body, CheckpointRecord& out) {
  static const std::regex kUuid("^[0-9a-fA-F-]{8,64}$");
  if (Status s = CheckKnownFields(body, {"uuid", "batches", "resources", "metadata"}, "the request body");
      !s.ok())
    return s;
  if (!body.contains("uuid") || !body["uuid"].is_string() ||
      !std::regex_match(body["uuid"].get<std::string>(), kUuid))
    return InvalidArgument("uuid must be a UUID string");
  if (!body.contains("batches") || !body["batches"].is_number_integer() || body["batches"].get<int64_t>() < 0)
    return InvalidArgument("batches must be a non-negative integer");
  if (!body.contains("resources") || !body["resources"].is_array())
    return InvalidArgument("resources must be a list of {path, size, sha256}");
  if (body.contains("metadata") && !body["metadata"].is_object())
    return InvalidArgument("metadata must be an object");
  if (body.contains("metadata") && NestsDeeperThan(body["metadata"], 64))
    return InvalidArgument("metadata must not nest deeper than 64 levels");
  const auto& resources = body["resources"];
  if (resources.size() > 100000) return {ErrorCode::kTooLarge, "resources lists over 100000 files"};
  for (size_t i = 0; i < resources.size(); ++i) {
    const auto& r = resources[i];
    const std::string at = "resources[" + std::to_string(i) + "]";
    if (Status s = CheckKnownFields(r, {"path", "size", "sha256"}, at); !s.ok()) return s;
    if (!r.is_object() || !r.contains("path") || !r["path"].is_string() ||
        !SafeRelative(r["path"].get<std::string>()))
      return InvalidArgument(at + ".path must be a relative path inside the checkpoint");
    if (!r.contains("size") || !r["size"].is_number_integer() || r["size"].get<int64_t>() < 0)
      return InvalidArgument(at + ".size must be a non-negative integer");
    if (!r.contains("sha256") || !r["sha256"].is_string() || !IsHex(r["sha256"].get<std::string>(), 64))
      return InvalidArgument(at + ".sha256 must be 64 lower-case hex digits");
  }
  out.uuid = body["uuid"].get<std::string>();
  out.batches = body["batches"].get<int64_t>();
  out.resources_json = resources.dump();
  out.metadata_json = body.value("metadata", nlohmann::json::object()).dump();
  return Status::Ok();
}

}  // namespace

std::string ExperimentController::CheckpointDir(const CheckpointRecord& c) {
  auto storage = nlohmann::json::parse(c.storage_json, nullptr, false);
  std::filesystem::path dir = storage.is_object() ? storage.value("host_path", "") : "";
  const std::string sub = storage.is_object() ? storage.value("storage_path", "") : "";
  if (!sub.empty()) dir /= sub;
  return (dir / c.uuid).string();
}

nlohmann::json ExperimentController::CheckpointStorageLocked(const ExperimentConfig& config) const {
  if (config.checkpoint_storage)
    return {{"type", config.checkpoint_storage->type},
            {"host_path", config.checkpoint_storage->host_path},
            {"storage_path", config.checkpoint_storage->storage_path}};
  return {{"type", "shared_fs"}, {"host_path", options_.checkpoint_root}, {"storage_path", ""}};
}

Result<bool> ExperimentController::RegisterCheckpoint(const std::string& allocation_id,
                                                      const std::string& token, const nlohmann::json& body) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  const LiveAllocation& live = **alloc;
  CheckpointRecord c;
  if (Status s = ParseCheckpoint(body, c); !s.ok()) return s;
  c.trial_id = live.record.trial_id;
  c.allocation_id = allocation_id;
  const ExperimentConfig* config = ConfigLocked(live.experiment_id);
  if (!config) return Internal("the experiment's config cannot be read");
  c.storage_json = CheckpointStorageLocked(*config).dump();
  const bool existed = store_.GetCheckpoint(c.uuid).ok();
  if (Status s = store_.AddCheckpoint(c); !s.ok()) return s;
  if (existed) return false;

  auto trial = store_.GetTrial(c.trial_id);
  if (!trial.ok()) return trial.status();
  bool newer = trial->latest_checkpoint.empty();
  if (!newer) {
    auto latest = store_.GetCheckpoint(trial->latest_checkpoint);
    newer = !latest.ok() || c.batches >= latest->batches;
  }
  if (newer) {
    trial->latest_checkpoint = c.uuid;
    if (Status s = store_.UpdateTrial(*trial); !s.ok()) return s;
  }
  spdlog::info("[controller] trial {} allocation {}: checkpoint {} at {} batches registered", c.trial_id,
               allocation_id, c.uuid, c.batches);
  return true;
}

Result<CheckpointRecord> ExperimentController::TrialCheckpoint(const std::string& allocation_id,
                                                               const std::string& token,
                                                               const std::string& uuid) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  auto c = store_.GetCheckpoint(uuid);
  if (!c.ok() || c->trial_id != (*alloc)->record.trial_id)
    return NotFound("checkpoint " + uuid + " does not belong to this trial");
  return c;
}

Result<bool> ExperimentController::PreemptionRequested(const std::string& allocation_id,
                                                       const std::string& token) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  return (*alloc)->preempt_requested;
}

Status ExperimentController::AcknowledgePreemption(const std::string& allocation_id,
                                                   const std::string& token) {
  std::lock_guard lock(mu_);
  auto alloc = AuthorizeLocked(allocation_id, token);
  if (!alloc.ok()) return alloc.status();
  if (!(*alloc)->preempt_requested) return Conflict("allocation " + allocation_id + " was not asked to stop");
  (*alloc)->preempt_acked = true;
  spdlog::info("[controller] allocation {} acknowledged preemption", allocation_id);
  return Status::Ok();
}

void ExperimentController::CollectCheckpointsLocked(int64_t experiment_id) {
  const ExperimentConfig* config = ConfigLocked(experiment_id);
  auto trials = store_.ListTrials(experiment_id);
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
    auto validation = store_.GetMetrics(trial.id, "validation");
    if (!checkpoints.ok() || !validation.ok()) return;
    for (const auto& c : *checkpoints) {
      if (c.state != "ACTIVE") continue;
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
    const std::string dir = CheckpointDir(records[uuid]);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // already missing is fine
    if (ec) {
      spdlog::warn("[controller] checkpoint {}: cannot delete {}: {}", uuid, dir, ec.message());
      continue;
    }
    if (Status s = store_.SetCheckpointState(uuid, "DELETED"); !s.ok())
      spdlog::warn("[controller] checkpoint {}: {}", uuid, s.message());
    else
      spdlog::info("[controller] checkpoint {} garbage collected", uuid);
  }
}

}  // namespace ring
