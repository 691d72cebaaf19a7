#include "master/lifecycle/experiment_settings.h"

#include <spdlog/spdlog.h>

namespace ring {
namespace {

std::vector<std::string> WithDefault(std::string root, std::vector<std::string> allowed) {
  allowed.insert(allowed.begin(), std::move(root));
  return allowed;
}

}  // namespace

ExperimentSettings::ExperimentSettings(Store& store, std::string checkpoint_root,
                                       std::vector<std::string> allowed_roots)
    : store_(store),
      checkpoint_root_(checkpoint_root),
      roots_(WithDefault(std::move(checkpoint_root), std::move(allowed_roots))) {}

Status ExperimentSettings::CheckStorage(const ExperimentConfig& config) const {
  if (!config.checkpoint_storage) return Status::Ok();
  const CheckpointStorageConfig& c = *config.checkpoint_storage;
  if (c.host_path.empty() && !c.storage_path.empty()) {  // below the master's root
    if (Status s = CheckpointRoots::CheckStoragePath(c.storage_path); !s.ok())
      return Status(ErrorCode::kInvalidConfig, "experiment.yaml:" + std::to_string(c.storage_path_line) +
                                                   ": checkpoint_storage.storage_path " + s.message());
    return Status::Ok();
  }
  if (c.host_path.empty()) return Status::Ok();  // the master's storage, with its own save_* counts
  if (Status s = roots_.CheckHostPath(c.host_path); !s.ok())
    return Status(ErrorCode::kInvalidConfig, "experiment.yaml:" + std::to_string(c.host_path_line) +
                                                 ": checkpoint_storage.host_path " + s.message());
  if (Status s = CheckpointRoots::CheckStoragePath(c.storage_path); !s.ok())
    return Status(ErrorCode::kInvalidConfig, "experiment.yaml:" + std::to_string(c.storage_path_line) +
                                                 ": checkpoint_storage.storage_path " + s.message());
  return Status::Ok();
}

const ExperimentConfig* ExperimentSettings::Config(int64_t experiment_id) {
  if (auto it = configs_.find(experiment_id); it != configs_.end()) return &it->second;
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return nullptr;
  auto config = ParseExperimentConfig(exp->config_yaml);
  if (!config.ok()) {
    spdlog::error("[lifecycle] experiment {}: stored config no longer parses: {}", experiment_id,
                  config.status().message());
    return nullptr;
  }
  return &configs_.emplace(experiment_id, std::move(config).value()).first->second;
}

void ExperimentSettings::Remember(int64_t experiment_id, ExperimentConfig config) {
  configs_[experiment_id] = std::move(config);
}

EffectiveResources ExperimentSettings::Effective(const ResourcesConfig& config, const ResourceOverrides& o) {
  EffectiveResources r;
  r.pool = config.resource_pool;
  r.slots_per_trial = static_cast<int>(config.slots_per_trial);
  r.priority = o.priority.value_or(config.priority);
  r.weight = o.weight.value_or(config.weight);
  r.max_slots = o.max_slots ? o.max_slots : config.max_slots;
  r.single_node = config.is_single_node.value_or(false);
  return r;
}

EffectiveResources ExperimentSettings::Resources(int64_t experiment_id) {
  auto it = overrides_.find(experiment_id);
  if (it == overrides_.end()) {
    auto stored = store_.GetResourceOverrides(experiment_id);
    it = overrides_.emplace(experiment_id, stored.ok() ? *stored : ResourceOverrides{}).first;
  }
  if (const ExperimentConfig* config = Config(experiment_id)) return Effective(config->resources, it->second);
  EffectiveResources r;
  if (it->second.priority) r.priority = *it->second.priority;
  if (it->second.weight) r.weight = *it->second.weight;
  if (it->second.max_slots) r.max_slots = *it->second.max_slots;
  return r;
}

Status ExperimentSettings::SetResources(int64_t experiment_id, const ResourcesPatch& patch, bool by_admin) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  Resources(experiment_id);  // loads the current overrides
  ResourceOverrides next = overrides_[experiment_id];
  if (by_admin) {
    if (patch.priority) next.admin_priority = patch.priority;
    if (patch.set_max_slots) next.admin_max_slots = patch.max_slots;
  } else {
    // Lower numbers run first: an owner may only move away from the admin's.
    if (patch.priority && next.admin_priority && *patch.priority < *next.admin_priority)
      return {ErrorCode::kPermissionDenied,
              "priority: an admin set experiment " + std::to_string(experiment_id) + "'s priority to " +
                  std::to_string(*next.admin_priority) +
                  "; its owner may not make it more important (a number below " +
                  std::to_string(*next.admin_priority) + ")"};
    if (patch.set_max_slots && next.admin_max_slots &&
        (!patch.max_slots || *patch.max_slots > *next.admin_max_slots))
      return {ErrorCode::kPermissionDenied,
              "max_slots: an admin set experiment " + std::to_string(experiment_id) + "'s max_slots to " +
                  std::to_string(*next.admin_max_slots) + "; its owner may not raise it" +
                  (patch.max_slots ? "" : " or remove it")};
  }
  if (patch.priority) next.priority = patch.priority;
  if (patch.weight) next.weight = patch.weight;
  if (patch.set_max_slots) next.max_slots = patch.max_slots;
  if (Status s = store_.SetResourceOverrides(experiment_id, next); !s.ok()) return s;
  overrides_[experiment_id] = next;
  spdlog::info("[lifecycle] experiment {}: resources set (priority {}, weight {}, max_slots {})",
               experiment_id, next.priority ? std::to_string(*next.priority) : "from config",
               next.weight ? std::to_string(*next.weight) : "from config",
               next.max_slots ? std::to_string(*next.max_slots) : "none");
  return Status::Ok();
}

CheckpointStorage ExperimentSettings::StorageOf(const ExperimentConfig& config) const {
  // A partial checkpoint_storage (no host_path) is merged with the master's.
  if (config.checkpoint_storage && !config.checkpoint_storage->host_path.empty())
    return {config.checkpoint_storage->type, config.checkpoint_storage->host_path,
            config.checkpoint_storage->storage_path};
  if (config.checkpoint_storage)
    return {"shared_fs", checkpoint_root_, config.checkpoint_storage->storage_path};
  return {"shared_fs", checkpoint_root_, ""};
}

}  // namespace ring
