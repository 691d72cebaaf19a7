#include "master/lifecycle/tasks.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "common/archive.h"

namespace ring {

Tasks::Tasks(Store& store, Allocations& allocations, ResourceManager& rm, std::vector<PoolSettings> pools,
             uint64_t max_context_bytes, IdleTimeoutLimits idle_limits)
    : store_(store),
      allocations_(allocations),
      rm_(rm),
      pools_(std::move(pools)),
      max_context_bytes_(max_context_bytes),
      idle_limits_(idle_limits) {}

bool Tasks::AllowsZeroSlots(const std::string& pool) const {
  for (const auto& p : pools_)
    if (p.name == pool) return p.zero_slot_tasks;
  return false;
}

Result<TaskRecord> Tasks::Create(TaskKind kind, const TaskOwner& owner, TaskSpec spec,
                                 const std::string& context) {
  if (kind == TaskKind::kTrial) return InvalidArgument("kind: a trial is made by its experiment");
  std::vector<std::string> declared;
  for (const auto& p : pools_) {
    declared.push_back(p.name);
    if (p.name == spec.resource_pool && !MaySubmitTo(p, owner.username, owner.admin) &&
        std::find(owner.bound_pools.begin(), owner.bound_pools.end(), p.name) == owner.bound_pools.end())
      return Status(ErrorCode::kPermissionDenied,
                    "resources.resource_pool: " + owner.username + " may not use pool " + p.name);
  }
  if (spec.slots == 0 && !AllowsZeroSlots(spec.resource_pool))
    return InvalidArgument(
        "resources.slots: 0 slots needs a pool with zero_slot_tasks: true in master.yaml; pool " +
        spec.resource_pool + " does not allow it");
  // The pool exists; then its slots fit on one of its agents: a task is one
  // process with all its slots (a pool without agents yet takes it).
  ResourcesConfig fits;
  fits.resource_pool = spec.resource_pool;
  fits.slots_per_trial = std::min<int64_t>(spec.slots, 1);
  if (Status s = rm_.CheckFits(fits, declared); !s.ok()) return s;
  std::optional<int> largest;
  for (const auto& agent : rm_.Offers())
    if (agent.pool == spec.resource_pool) largest = std::max(largest.value_or(0), agent.total_slots);
  if (largest && spec.slots > *largest) {
    std::string noun(ToString(kind));
    for (char& c : noun) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return Status(ErrorCode::kInvalidConfig,
                  "resources.slots: a " + noun + " of " + std::to_string(spec.slots) +
                      " slots must fit on one agent (it is one process); the largest agent in pool " +
                      spec.resource_pool + " has " + std::to_string(*largest) + " slots");
  }
  if (spec.environment.HasImage())
    for (const auto& p : pools_)
      if (p.name == spec.resource_pool)
        if (Status s = rm_.CheckContainers(p.name, p.container_runtime); !s.ok()) return s;
  if (context.size() > max_context_bytes_)
    return Status(ErrorCode::kTooLarge, "context is " + std::to_string(context.size()) +
                                            " bytes, over the limit of " +
                                            std::to_string(max_context_bytes_));
  if (!context.empty())
    if (Status s = ValidateArchive(context); !s.ok())
      return InvalidArgument("context is not a valid tar.gz: " + s.message());
  spec.has_context = !context.empty();
  if (kind == TaskKind::kShell || kind == TaskKind::kNotebook) {
    if (!spec.idle_timeout_s) spec.idle_timeout_s = idle_limits_.default_s;
    if (spec.idle_timeout_s && idle_limits_.max_s && *spec.idle_timeout_s > *idle_limits_.max_s)
      return InvalidArgument("idle_timeout: " + std::to_string(*spec.idle_timeout_s) +
                             "s is longer than this master allows (interactive.max_idle_timeout: " +
                             std::to_string(*idle_limits_.max_s) + "s)");
  }

  TaskRecord task;
  task.kind = kind;
  task.owner = owner.username;
  task.spec = spec;
  auto id = store_.CreateTask(task, context);
  if (!id.ok()) return id.status();
  auto stored = store_.GetTask(*id);
  if (!stored.ok()) return stored.status();
  specs_[*id] = spec;
  if (Status s = allocations_.QueueTask(*stored); !s.ok()) {
    specs_.erase(*id);
    (void)store_.EndTask(*id);
    return s;
  }
  spdlog::info("[tasks] {} {} of {} queued: {} slots in pool {}{}", ToString(kind), *id, owner.username,
               spec.slots, spec.resource_pool, spec.preemptible ? ", preemptible" : "");
  return stored;
}

Status Tasks::Kill(int64_t task_id) {
  for (auto& [id, alloc] : allocations_.live())
    if (alloc.record.task_id == task_id) {
      allocations_.Stop(alloc, EndCause::kUserKill);
      return Status::Ok();
    }
  return Status::Ok();  // ended already
}

void Tasks::OnAllocationEnded(const LiveAllocation& alloc) {
  const int64_t task_id = alloc.record.task_id;
  if (Status s = store_.EndTask(task_id); !s.ok())
    spdlog::error("[tasks] task {}: cannot record its end: {}", task_id, s.message());
  spdlog::info("[tasks] task {} ended with allocation {}: {} ({}){}", task_id, alloc.record.id,
               ToString(alloc.record.end_cause.value_or(EndCause::kFailed)), alloc.record.exit_reason,
               alloc.record.exit_code ? ", exit code " + std::to_string(*alloc.record.exit_code) : "");
  specs_.erase(task_id);
}

void Tasks::EndIdle(SteadyTime now, const IdleSince& idle_since) {
  std::vector<LiveAllocation*> idle;
  for (auto& [id, alloc] : allocations_.live()) {
    if ((alloc.kind != TaskKind::kShell && alloc.kind != TaskKind::kNotebook) || alloc.stop_cause ||
        alloc.record.state != AllocationState::kRunning)
      continue;
    const TaskSpec* spec = Spec(alloc.record.task_id);
    if (!spec || !spec->idle_timeout_s || *spec->idle_timeout_s <= 0) continue;
    const auto since = idle_since(alloc.kind, id);
    if (since && now - *since >= std::chrono::seconds(*spec->idle_timeout_s)) idle.push_back(&alloc);
  }
  for (LiveAllocation* alloc : idle) allocations_.Stop(*alloc, EndCause::kIdleTimeout);
}

std::vector<Tasks::RunningNotebook> Tasks::RunningNotebooks() {
  std::vector<RunningNotebook> out;
  for (auto& [id, alloc] : allocations_.live()) {
    if (alloc.kind != TaskKind::kNotebook || alloc.stop_cause ||
        alloc.record.state != AllocationState::kRunning)
      continue;
    const TaskSpec* spec = Spec(alloc.record.task_id);
    if (!spec) continue;
    out.push_back({id, alloc.record.task_id, spec->notebook_idle_type, spec->idle_timeout_s});
  }
  return out;
}

const TaskSpec* Tasks::Spec(int64_t task_id) {
  if (auto it = specs_.find(task_id); it != specs_.end()) return &it->second;
  auto task = store_.GetTask(task_id);
  if (!task.ok() || task->kind == TaskKind::kTrial) return nullptr;
  return &specs_.emplace(task_id, task->spec).first->second;
}

}  // namespace ring
