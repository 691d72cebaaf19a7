#pragma once
// Each experiment's parsed config and its scheduling settings in effect
// (the config's, or as set live). A cache over the store, owned by the
// lifecycle and used on its executor only.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/experiment_config.h"
#include "master/files/checkpoint_roots.h"
#include "master/lifecycle/commands.h"
#include "master/store/store.h"

namespace ring {

struct EffectiveResources {
  std::string pool;
  int slots_per_trial = 1;
  int64_t priority = 42;
  double weight = 1;
  std::optional<int64_t> max_slots;
  bool single_node = false;  // resources.is_single_node: all slots on one agent
};

class ExperimentSettings {
 public:
  // `allowed_roots`: master.yaml checkpoint_storage.allowed_roots; the
  // default root is always allowed.
  ExperimentSettings(Store& store, std::string checkpoint_root, std::vector<std::string> allowed_roots = {});
  // Null when the experiment does not exist or its stored config no longer parses.
  const ExperimentConfig* Config(int64_t experiment_id);
  void Remember(int64_t experiment_id, ExperimentConfig config);
  EffectiveResources Resources(int64_t experiment_id);
  // The same from a config and its overrides: what readers off the
  // lifecycle's thread use (the REST views).
  static EffectiveResources Effective(const ResourcesConfig& config, const ResourceOverrides& overrides);
  // Writes the patch (already validated) and applies it at once. What an
  // admin sets becomes the owner's bound: an owner's patch that makes the
  // priority more important than, or max_slots larger (or unlimited) than,
  // what an admin set is kPermissionDenied naming the field.
  Status SetResources(int64_t experiment_id, const ResourcesPatch& patch, bool by_admin);
  // Where the experiment's checkpoints go: its config's, or the master's root.
  CheckpointStorage StorageOf(const ExperimentConfig& config) const;
  // Where checkpoints may be (the default root and the allowed roots).
  const CheckpointRoots& roots() const { return roots_; }
  // Why the config's checkpoint_storage is outside the allowed roots, as
  // "experiment.yaml:<line>: checkpoint_storage.<key> ..."; Ok when inside.
  Status CheckStorage(const ExperimentConfig& config) const;

 private:
  Store& store_;
  const std::string checkpoint_root_;
  const CheckpointRoots roots_;
  std::map<int64_t, ExperimentConfig> configs_;
  std::map<int64_t, ResourceOverrides> overrides_;  // read through from the store
};

}  // namespace ring
