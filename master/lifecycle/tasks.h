#pragma once
// Tasks that are not trials (commands, shells and notebooks, each a TaskKind): their creation, checked
// against the pool and written with their spec and context before their one allocation is queued; their kill;
// their end when that allocation ends. A task has one allocation and is
// never restarted: it cannot checkpoint, so a preempted or failed one ends
// (its allocation's EndCause says why). The specs of live tasks are read
// through from the store. Used on the lifecycle's executor only.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/task_config.h"
#include "master/lifecycle/allocations.h"
#include "master/scheduler/pool_settings.h"

namespace ring {

// Who creates a task (a signed-in user).
struct TaskOwner {
  std::string username;
  bool admin = false;
  // Pools bound to workspaces the owner belongs to: open to them whatever
  // the pool's allowed_users say (master/lifecycle/read_access.h PoolsBoundFor).
  std::vector<std::string> bound_pools;
};

class Tasks {
 public:
  Tasks(Store& store, Allocations& allocations, ResourceManager& rm, std::vector<PoolSettings> pools,
        uint64_t max_context_bytes, IdleTimeoutLimits idle_limits = {});

  // Writes the task (its spec, its context tar.gz, "" for none) and queues
  // its allocation. kInvalidArgument / kInvalidConfig naming the field, or
  // kPermissionDenied for a pool the owner may not use; nothing is written then.
  Result<TaskRecord> Create(TaskKind kind, const TaskOwner& owner, TaskSpec spec, const std::string& context);
  // Stops its allocation (EndCause USER_KILL); a task that has ended is left as it is.
  Status Kill(int64_t task_id);
  // Ends every running shell or notebook whose spec sets idle_timeout and
  // that has been idle that long: `idle_since` answers since when an
  // allocation of that kind has been idle (a shell: no terminal attached; a
  // notebook: its notebook_idle_type), nullopt while it is not. Its
  // allocation ends IDLE_TIMEOUT.
  using IdleSince = std::function<std::optional<SteadyTime>(TaskKind, const std::string& allocation_id)>;
  void EndIdle(SteadyTime now, const IdleSince& idle_since);
  // The running notebooks' allocations (id, task, spec), for whoever looks at their servers.
  struct RunningNotebook {
    std::string allocation_id;
    int64_t task_id = 0;
    NotebookIdleType idle_type = NotebookIdleType::kKernelsOrTerminals;
    std::optional<int64_t> idle_timeout_s;
  };
  std::vector<RunningNotebook> RunningNotebooks();
  // Its allocation ended: the task ends with it.
  void OnAllocationEnded(const LiveAllocation& alloc);
  // The spec of a task that is not a trial; null when it cannot be read.
  const TaskSpec* Spec(int64_t task_id);
  // Whether `pool` lets tasks hold no slot (resource_pools[].zero_slot_tasks).
  bool AllowsZeroSlots(const std::string& pool) const;

 private:
  Store& store_;
  Allocations& allocations_;
  ResourceManager& rm_;
  const std::vector<PoolSettings> pools_;
  const uint64_t max_context_bytes_;
  const IdleTimeoutLimits idle_limits_;
  std::map<int64_t, TaskSpec> specs_;  // of live tasks, by task id
};

}  // namespace ring
