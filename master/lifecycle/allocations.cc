#include "master/lifecycle/allocations.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "master/auth/tokens.h"

namespace ring {

Allocations::Allocations(Store& store, ResourceManager& rm, AllocationTokens& tokens,
                         RendezvousStore& rendezvous)
    : store_(store), rm_(rm), tokens_(tokens), rendezvous_(rendezvous) {}

void Allocations::SetHandlers(EndedHandler on_ended, DirtyHandler on_dirty) {
  on_ended_ = std::move(on_ended);
  on_dirty_ = std::move(on_dirty);
}

void Allocations::Write(const AllocationRecord& record) {
  if (Status s = store_.UpdateAllocation(record); !s.ok())
    spdlog::error("[allocations] allocation {}: cannot record {}: {}", record.id, ToString(record.state),
                  s.message());
}

Status Allocations::Queue(const TrialRecord& trial, const std::string& pool, int slots) {
  auto previous = store_.ListAllocations(trial.id);
  if (!previous.ok()) return previous.status();
  LiveAllocation alloc;
  alloc.record.id = std::to_string(trial.id) + "." + std::to_string(previous->size());
  alloc.record.task_id = trial.task_id;
  alloc.record.trial_id = trial.id;
  alloc.record.state = AllocationState::kPending;
  alloc.record.slots = slots;
  if (Status s = store_.CreateAllocation(alloc.record); !s.ok()) return s;
  alloc.record.created_at = NowRfc3339();  // the store's own is the same to the millisecond or so
  alloc.experiment_id = trial.experiment_id;
  alloc.pool = pool;
  alloc.world_size = slots;
  spdlog::info("[allocations] trial {} allocation {} queued for {} slots in pool {}", trial.id,
               alloc.record.id, slots, pool);
  Enqueue(std::move(alloc));
  return Status::Ok();
}

Status Allocations::QueueTask(const TaskRecord& task) {
  if (task.kind == TaskKind::kTrial) return InvalidArgument("a trial's allocation is queued with its trial");
  auto previous = store_.ListTaskAllocations(task.id);
  if (!previous.ok()) return previous.status();
  LiveAllocation alloc;
  alloc.kind = task.kind;
  // "command-12.0": never the same as a trial's "<trial>.<attempt>".
  std::string kind(ToString(task.kind));
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  alloc.record.id = kind + "-" + std::to_string(task.id) + "." + std::to_string(previous->size());
  alloc.record.task_id = task.id;
  alloc.record.state = AllocationState::kPending;
  alloc.record.slots = task.spec.slots;
  if (Status s = store_.CreateAllocation(alloc.record); !s.ok()) return s;
  alloc.record.created_at = NowRfc3339();
  alloc.pool = task.spec.resource_pool;
  alloc.world_size = static_cast<int>(task.spec.slots);
  alloc.preemptible = task.spec.preemptible;
  spdlog::info("[allocations] {} {} allocation {} queued for {} slots in pool {}", ToString(task.kind),
               task.id, alloc.record.id, task.spec.slots, alloc.pool);
  Enqueue(std::move(alloc));
  return Status::Ok();
}

void Allocations::Enqueue(LiveAllocation alloc) {
  const std::string pool = alloc.pool;
  queue_.push_back(alloc.record.id);
  live_.emplace(alloc.record.id, std::move(alloc));
  if (on_dirty_) on_dirty_(pool);
}

void Allocations::Hold(LiveAllocation& alloc) {
  alloc.master_port = ports_.Acquire(alloc.record.id);
  rendezvous_.Open(alloc.record.id);
  tokens_.Add(
      alloc.record.id, alloc.record.token_hash,
      {alloc.is_trial() ? alloc.trial_id() : 0, alloc.experiment_id, alloc.kind, alloc.record.task_id});
}

Result<std::string> Allocations::Assign(LiveAllocation& alloc, std::vector<Placement> placements,
                                        int processes) {
  const std::string token = NewToken();
  AllocationRecord next = alloc.record;
  next.state = AllocationState::kAssigned;
  next.token_hash = HashToken(token);
  next.placements = std::move(placements);
  next.processes = processes;
  if (Status s = store_.UpdateAllocation(next); !s.ok()) return s;
  alloc.record = next;
  alloc.processes = processes;
  std::erase(queue_, alloc.record.id);
  alloc.started_seq = next_started_seq_++;
  Hold(alloc);
  return token;
}

void Allocations::Stop(LiveAllocation& alloc, EndCause why) {
  if (!alloc.stop_cause) alloc.stop_cause = why;
  if (alloc.pending()) {
    End(alloc.record.id, why, std::string(Describe(why)));
    return;
  }
  if (CanTransition(alloc.record.state, AllocationState::kTerminating)) {
    alloc.record.state = AllocationState::kTerminating;
    Write(alloc.record);
  }
  rm_.Kill(alloc.record.id, alloc.placements(), why);
  if (on_dirty_) on_dirty_(alloc.pool);  // it counts as leaving now
}

void Allocations::End(const std::string& allocation_id, EndCause cause, const std::string& detail) {
  auto it = live_.find(allocation_id);
  if (it == live_.end()) return;
  LiveAllocation& alloc = it->second;
  alloc.record.state = AllocationState::kTerminated;
  alloc.record.end_cause = cause;
  alloc.record.exit_reason = detail;
  if (!alloc.invalid_hparams.empty()) {
    alloc.record.end_cause = EndCause::kInvalidHparams;
    alloc.record.exit_reason = "invalid hyperparameters: " + alloc.invalid_hparams;
  }
  if (alloc.failure_code)
    alloc.record.exit_code = alloc.failure_code;
  else if (cause == EndCause::kCompleted ||
           (cause == EndCause::kSearcherStopped && !alloc.exited_ranks.empty()))
    alloc.record.exit_code = 0;  // every rank exited 0
  alloc.record.ended_at = NowRfc3339();
  Write(alloc.record);
  spdlog::info("[allocations] allocation {} of task {} ({}) terminated: {} ({})", allocation_id,
               alloc.record.task_id, ToString(alloc.kind), ToString(*alloc.record.end_cause),
               alloc.record.exit_reason);
  rm_.Release(allocation_id);
  ports_.Release(allocation_id);
  tokens_.Remove(allocation_id);
  rendezvous_.Close(allocation_id);  // wakes its waiting reads, which then get 409
  std::erase(queue_, allocation_id);
  const std::string pool = alloc.pool;
  if (on_ended_) on_ended_(alloc);
  live_.erase(allocation_id);
  if (on_dirty_) on_dirty_(pool);
}

void Allocations::RequestPreemption(LiveAllocation& alloc, EndCause why, SteadyTime now,
                                    std::chrono::seconds timeout) {
  if (!alloc.is_trial()) {
    spdlog::info("[allocations] allocation {}: stopping it ({}); a {} cannot checkpoint", alloc.record.id,
                 Describe(why), ToString(alloc.kind));
    Stop(alloc, why);
    return;
  }
  if (!alloc.preemption.Request(why, now + timeout)) return;
  spdlog::info("[allocations] allocation {}: asked to checkpoint and exit within {} s ({})", alloc.record.id,
               timeout.count(), Describe(why));
  if (on_dirty_) on_dirty_(alloc.pool);  // it counts as leaving now
}

Status Allocations::Recover(const std::function<std::string(int64_t)>& pool_of,
                            const std::function<int(const LiveAllocation&)>& processes_of,
                            SteadyTime deadline) {
  auto live = store_.ListLiveAllocations();
  if (!live.ok()) return live.status();
  for (auto& rec : *live) {
    LiveAllocation alloc;
    alloc.record = rec;
    alloc.world_size = static_cast<int>(rec.slots);
    if (rec.trial_id) {
      auto trial = store_.GetTrial(*rec.trial_id);
      if (!trial.ok()) return trial.status();
      alloc.experiment_id = trial->experiment_id;
      alloc.pool = pool_of(alloc.experiment_id);
    } else {
      auto task = store_.GetTask(rec.task_id);
      if (!task.ok()) return task.status();
      alloc.kind = task->kind;
      alloc.pool = task->spec.resource_pool;
      alloc.preemptible = task->spec.preemptible;
    }
    if (alloc.pending()) {
      queue_.push_back(rec.id);
    } else {
      // Its nodes get until the deadline to come back and claim it; its
      // rendezvous store is empty: ranks waiting on keys set before the
      // restart time out.
      // Rows from before processes were recorded ask how it was launched.
      alloc.processes = rec.processes > 0 ? rec.processes : processes_of(alloc);
      rm_.Adopt(rec.id, alloc.placements(), alloc.adopted_processes(), alloc.pool, deadline);
      Hold(alloc);
    }
    spdlog::info("[allocations] recovered allocation {} in state {}", rec.id, ToString(rec.state));
    live_.emplace(rec.id, std::move(alloc));
  }
  return Status::Ok();
}

LiveAllocation* Allocations::Find(const std::string& allocation_id) {
  auto it = live_.find(allocation_id);
  return it == live_.end() ? nullptr : &it->second;
}

Result<LiveAllocation*> Allocations::Live(const std::string& allocation_id) {
  if (LiveAllocation* alloc = Find(allocation_id)) {
    if (!alloc->is_trial())
      return Status(ErrorCode::kPermissionDenied, "allocation " + allocation_id + " is a " +
                                                      std::string(ToString(alloc->kind)) +
                                                      "'s, and only a trial makes this call");
    return alloc;
  }
  return Conflict("allocation " + allocation_id + " has ended");
}

bool Allocations::TrialHasLive(int64_t trial_id) const {
  for (const auto& [id, alloc] : live_)
    if (alloc.is_trial() && alloc.trial_id() == trial_id) return true;
  return false;
}

std::vector<std::string> Allocations::OfExperiment(int64_t experiment_id) const {
  std::vector<std::string> ids;
  for (const auto& [id, alloc] : live_)
    if (alloc.is_trial() && alloc.experiment_id == experiment_id) ids.push_back(id);
  return ids;
}

}  // namespace ring
