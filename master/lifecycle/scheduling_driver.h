#pragma once
// The scheduling driver: builds the pure scheduler's input for each pool
// whose queue, running set or capacity changed (its dirty mark), applies the
// decision — launches what it assigned through the resource manager and asks
// the victims to checkpoint and stop — and keeps each waiting request's
// reason and place for the job list. A pass runs from the dirty mark at the
// end of every lifecycle event and from the tick, never from inside one.
// Each pool's passes go through its own PoolScheduler, which keeps the
// queue's order and the last decision between passes and re-decides only
// what changed (the same decision as SchedulePool).
// Used on the lifecycle's executor only.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "master/lifecycle/allocations.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/scheduler/pool_scheduler.h"
#include "master/scheduler/pool_settings.h"

namespace ring {

class LogPolicies;
class RankEvents;
class Tasks;
class Trials;

// One row of the job list (GET /api/v1/jobs).
struct JobRow {
  std::string allocation_id;
  TaskKind kind = TaskKind::kTrial;
  int64_t task_id = 0;
  int64_t trial_id = 0;       // 0 for a task that is not a trial
  int64_t experiment_id = 0;  // 0 for a task that is not a trial
  std::string owner;
  AllocationState state = AllocationState::kPending;
  int slots = 0;
  std::string pool;
  int64_t priority = 0;
  double weight = 1;
  std::string queued_at;
  bool preempting = false;
  std::optional<int> position;        // 1-based place in its pool's queue, when waiting
  std::optional<std::string> reason;  // why it waits, when waiting
};

class SchedulingDriver {
 public:
  using PassObserver = std::function<void(const std::string& pool, double seconds)>;
  SchedulingDriver(Store& store, Allocations& allocations, ExperimentSettings& settings, Trials& trials,
                   Tasks& tasks, RankEvents& ranks, LogPolicies& log_policies, ResourceManager& rm,
                   std::vector<PoolSettings> pools, PassObserver observer);
  void MarkDirty(const std::string& pool) { dirty_.insert(pool); }
  void MarkAllDirty() { all_dirty_ = true; }
  bool dirty() const { return all_dirty_ || !dirty_.empty(); }
  // One pass over each dirty pool; clears the marks.
  void RunIfDirty(SteadyTime now);
  // Every allocation that holds or wants slots, pool by pool: the running
  // ones in the order they started, then the waiting ones in the order of
  // the last pass, each with its reason.
  std::vector<JobRow> Jobs();
  const std::vector<PoolSettings>& pools() const { return pools_; }
  // How an experiment's allocations in `pool` start their processes:
  // resources.launch, else the pool's default, else the entrypoint rule
  // (`ring experiment create --launch` writes resources.launch).
  LaunchMode LaunchModeOf(int64_t experiment_id, const std::string& pool) const;
  // What a request of the experiment asks of an agent when its ranks run in
  // a container (environment.image, the pool's container_runtime).
  std::optional<ContainerNeed> ContainerNeedOf(int64_t experiment_id, const std::string& pool) const;
  // The container runtime `pool` requires (resource_pools[].container_runtime); "" for any.
  std::string RuntimeOf(const std::string& pool) const;
  // The processes a placed allocation runs (its ranks that report exits).
  int ProcessCount(const LiveAllocation& alloc) const;

 private:
  // What the scheduler weighs of an allocation: its experiment's settings
  // for a trial, its spec for another task.
  struct Demand {
    int64_t group = 0;  // the fair-share group: the experiment, or the task itself (as -task_id)
    int priority = 42;
    double weight = 1;
    std::optional<int> max_slots;
    bool single_node = false;
    std::optional<ContainerNeed> container;
  };
  Demand DemandOf(const LiveAllocation& alloc);
  void Pass(const std::string& pool, SteadyTime now);
  // Assigns and launches; an allocation that cannot be launched ends.
  void Launch(LiveAllocation& alloc, const Assignment& assignment);
  Result<LaunchSpec> SpecFor(const LiveAllocation& alloc);
  // The launch of a task that is not a trial: one process with all its
  // slots, its argv without a shell, its context as the model definition.
  Result<LaunchSpec> TaskSpecFor(const LiveAllocation& alloc);
  // environment.image and bind_mounts as the pool's containers.
  void AddContainers(const EnvironmentConfig& env, const std::vector<BindMount>& mounts,
                     const std::string& pool, const std::string& checkpoint_path, LaunchSpec& spec) const;
  // The task's owner and, when the owner is linked to one, the Unix account
  // its ranks run as. A user that no longer exists runs unlinked.
  Status AddOwner(int64_t task_id, LaunchSpec& spec);
  bool IsQueued(const std::string& allocation_id);

  Store& store_;
  Allocations& allocations_;
  ExperimentSettings& settings_;
  Trials& trials_;
  Tasks& tasks_;
  RankEvents& ranks_;
  LogPolicies& log_policies_;
  ResourceManager& rm_;
  const std::vector<PoolSettings> pools_;
  PassObserver observer_;
  std::set<std::string> dirty_;
  bool all_dirty_ = true;
  std::map<std::string, PoolScheduler> schedulers_;     // per pool, kept between its passes
  std::map<std::string, std::string> pending_reasons_;  // of each pool's last pass, by allocation
  std::map<std::string, int> pass_positions_;           // 1-based place in its pool's last pass order
};

}  // namespace ring
