#pragma once
// The searcher's operation of each trial (how many batches it is to train
// to), as search coordination last published it, for readers on other
// threads: the REST API's trial views read it without a hop to the
// lifecycle's thread. Search coordination publishes an experiment's
// operations whenever its searcher runs, is loaded or is dropped.
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

namespace ring {

class TrialOperationsView {
 public:
  // Trial id -> operation length in batches (none: the trial has no open operation).
  using Operations = std::map<int64_t, std::optional<int64_t>>;

  void Publish(int64_t experiment_id, Operations operations);
  void Forget(int64_t experiment_id);
  // The experiment's operations; none when its searcher is not loaded (ask
  // the lifecycle, which loads it).
  std::optional<Operations> Of(int64_t experiment_id) const;
  // One trial's operation; none when its experiment's searcher is not loaded.
  std::optional<std::optional<int64_t>> Of(int64_t experiment_id, int64_t trial_id) const;

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<int64_t, Operations> by_experiment_;
};

}  // namespace ring
