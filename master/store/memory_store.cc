// MemoryStore: experiments, trials and allocations. Each check here mirrors a
// constraint of migrations/0001_initial.sql and its error code in SqliteStore.
#include "master/store/memory_store.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "master/store/store_util.h"

namespace ring {
namespace {

// SQLite stores a NaN REAL as NULL.
std::optional<double> StoredReal(std::optional<double> v) {
  if (v && std::isnan(*v)) return std::nullopt;
  return v;
}

Status CheckExperiment(const ExperimentRecord& e) {
  if (!IsKnown(e.state)) return InvalidArgument("experiment: unknown state");
  if (!(e.progress >= 0 && e.progress <= 1)) return InvalidArgument("experiment: progress must be in [0, 1]");
  return Status::Ok();
}

Status CheckTrial(const TrialRecord& t) {
  if (!IsKnown(t.state)) return InvalidArgument("trial: unknown state");
  if (t.restarts < 0) return InvalidArgument("trial: restarts must not be negative");
  if (t.total_batches < 0) return InvalidArgument("trial: total_batches must not be negative");
  return Status::Ok();
}

}  // namespace

Result<int64_t> MemoryStore::CreateExperiment(const ExperimentRecord& e, const std::string& model_tar_gz) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  if (Status s = CheckExperiment(e); !s.ok()) return s;
  if (e.best_trial_id && !trials_.contains(*e.best_trial_id)) {
    return InvalidArgument("create experiment: best trial " + std::to_string(*e.best_trial_id) +
                           " does not exist");
  }
  if (!e.warm_start_checkpoint.empty() && !checkpoints_.contains(e.warm_start_checkpoint))
    return InvalidArgument("create experiment: warm start checkpoint " + e.warm_start_checkpoint +
                           " does not exist");
  if (!projects_.contains(e.project_id))
    return InvalidArgument("create experiment: project " + std::to_string(e.project_id) + " does not exist");
  StoredExperiment stored{e, model_tar_gz};
  ExperimentRecord& r = stored.record;
  r.id = next_experiment_id_++;
  r.best_validation = StoredReal(r.best_validation);
  r.created_at = NowRfc3339();
  r.ended_at = EndedAt(IsTerminal(r.state), e.ended_at, "", r.created_at);
  r.description.reset();  // set after submit only (SetExperimentInfo)
  r.labels.reset();
  r.deleting = false;
  experiments_.emplace(r.id, std::move(stored));
  return r.id;
}

Result<ExperimentRecord> MemoryStore::GetExperiment(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(id) + " not found");
  return it->second.record;
}

Result<Page<ExperimentRecord>> MemoryStore::ListExperiments(int64_t limit, int64_t offset) {
  if (Status s = CheckPage(limit, offset); !s.ok()) return s;
  std::lock_guard lock(mu_);
  Page<ExperimentRecord> page;
  page.total = static_cast<int64_t>(experiments_.size());
  int64_t index = 0;
  for (const auto& [id, stored] : experiments_) {
    if (static_cast<int64_t>(page.items.size()) >= limit) break;
    if (index++ >= offset) page.items.push_back(stored.record);
  }
  return page;
}

Result<std::string> MemoryStore::GetModelDefinition(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  return it->second.model_tar_gz;
}

Result<BlobPiece> MemoryStore::ReadModelDefinition(int64_t experiment_id, int64_t offset, char* out,
                                                   size_t size) {
  std::lock_guard lock(mu_);
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  const std::string& model = it->second.model_tar_gz;
  BlobPiece piece;
  piece.total = static_cast<int64_t>(model.size());
  if (offset < 0 || offset > piece.total)
    return InvalidArgument("offset " + std::to_string(offset) + " is past the model definition's " +
                           std::to_string(piece.total) + " bytes");
  piece.bytes = model.copy(out, size, static_cast<size_t>(offset));
  return piece;
}

Status MemoryStore::SetExperimentInfo(int64_t id, const ExperimentInfo& info) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(id) + " not found");
  ExperimentRecord& r = it->second.record;
  if (info.name && !info.name->empty()) r.name = *info.name;
  if (info.description) r.description = *info.description;
  if (info.labels) r.labels = *info.labels;
  return Status::Ok();
}

Status MemoryStore::SetExperimentConfig(int64_t id, const std::string& config_yaml) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(id) + " not found");
  it->second.record.config_yaml = config_yaml;
  return Status::Ok();
}

Status MemoryStore::MarkExperimentDeleting(int64_t id) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(id) + " not found");
  it->second.record.deleting = true;
  return Status::Ok();
}

Result<std::vector<int64_t>> MemoryStore::ListDeletingExperiments() {
  std::lock_guard lock(mu_);
  std::vector<int64_t> ids;
  for (const auto& [id, stored] : experiments_)
    if (stored.record.deleting) ids.push_back(id);
  return ids;
}

Status MemoryStore::DeleteExperiment(int64_t id) {
  const WriteNotice changes(experiments_generation_);
  const WriteNotice metrics(metrics_generation_);
  std::lock_guard lock(mu_);
  if (!experiments_.contains(id)) return NotFound("experiment " + std::to_string(id) + " not found");
  std::set<int64_t> trials, tasks;
  for (const auto& [trial_id, t] : trials_)
    if (t.experiment_id == id) {
      trials.insert(trial_id);
      if (t.task_id) tasks.insert(t.task_id);
    }
  // Another experiment that warm-starts from one of its checkpoints keeps it (as SQLite's key does).
  for (const auto& [other, stored] : experiments_)
    if (other != id && !stored.record.warm_start_checkpoint.empty())
      if (auto c = checkpoints_.find(stored.record.warm_start_checkpoint);
          c != checkpoints_.end() && trials.contains(c->second.trial_id))
        return Status(ErrorCode::kConflict, "experiment " + std::to_string(other) +
                                                " starts from checkpoint " + c->first + " of experiment " +
                                                std::to_string(id));
  // A model version keeps its checkpoint (as SQLite's key does).
  for (const auto& [key, v] : model_versions_)
    if (auto c = checkpoints_.find(v.checkpoint_uuid);
        c != checkpoints_.end() && trials.contains(c->second.trial_id))
      return Conflict("checkpoint " + v.checkpoint_uuid + " of experiment " + std::to_string(id) +
                      " is version " + std::to_string(v.version) + " of model " + v.model);
  std::erase_if(metrics_, [&](const auto& m) { return trials.contains(std::get<0>(m.first)); });
  std::erase_if(logs_, [&](const auto& l) { return trials.contains(l.first); });
  std::erase_if(log_policy_matches_, [&](const auto& l) { return trials.contains(l.first); });
  std::erase_if(reservations_, [&](const auto& r) { return trials.contains(r.second.trial_id); });
  std::erase_if(checkpoints_, [&](const auto& c) { return trials.contains(c.second.trial_id); });
  std::set<std::string> allocations;
  for (const auto& a : allocations_)
    if (a.trial_id && trials.contains(*a.trial_id)) allocations.insert(a.id);
  std::erase_if(slurm_jobs_, [&](const auto& j) { return allocations.contains(j.first); });
  std::erase_if(allocations_, [&](const AllocationRecord& a) { return allocations.contains(a.id); });
  allocation_index_.clear();
  for (size_t i = 0; i < allocations_.size(); ++i) allocation_index_[allocations_[i].id] = i;
  std::erase_if(task_logs_, [&](const auto& l) { return tasks.contains(l.first); });
  std::erase_if(trial_of_task_, [&](const auto& t) { return tasks.contains(t.first); });
  std::erase_if(tasks_, [&](const auto& t) { return tasks.contains(t.first); });
  std::erase_if(trials_, [&](const auto& t) { return trials.contains(t.first); });
  searcher_snapshots_.erase(id);
  overrides_.erase(id);
  experiments_.erase(id);
  for (auto& [other, stored] : experiments_)
    if (stored.record.parent_id == id) stored.record.parent_id.reset();
  return Status::Ok();
}

Status MemoryStore::UpdateExperiment(const ExperimentRecord& e) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = experiments_.find(e.id);
  if (it == experiments_.end()) return NotFound("experiment " + std::to_string(e.id) + " not found");
  if (Status s = CheckExperiment(e); !s.ok()) return s;
  if (e.best_trial_id && !trials_.contains(*e.best_trial_id)) {
    return InvalidArgument("update experiment: best trial " + std::to_string(*e.best_trial_id) +
                           " does not exist");
  }
  ExperimentRecord& r = it->second.record;
  r.state = e.state;
  r.archived = e.archived;
  r.progress = e.progress;
  r.best_trial_id = e.best_trial_id;
  r.best_validation = StoredReal(e.best_validation);
  r.ended_at = EndedAt(IsTerminal(e.state), e.ended_at, r.ended_at, NowRfc3339());
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryStore::ListLiveWarmStarts() {
  std::lock_guard lock(mu_);
  std::set<std::string> live;
  for (const auto& [id, stored] : experiments_)
    if (!stored.record.warm_start_checkpoint.empty() && !IsTerminal(stored.record.state))
      live.insert(stored.record.warm_start_checkpoint);
  return std::vector<std::string>(live.begin(), live.end());
}

Result<std::vector<int64_t>> MemoryStore::ListWarmStartedFrom(int64_t trial_id) {
  std::lock_guard lock(mu_);
  std::vector<int64_t> ids;
  for (const auto& [id, stored] : experiments_) {
    auto c = checkpoints_.find(stored.record.warm_start_checkpoint);
    if (!stored.record.deleting && c != checkpoints_.end() && c->second.trial_id == trial_id)
      ids.push_back(id);
  }
  return ids;
}

Result<int64_t> MemoryStore::CreateTask(const TaskRecord& t, const std::string& context_tar_gz) {
  if (t.kind == TaskKind::kTrial)
    return InvalidArgument("create task: a trial's task is made with the trial");
  std::lock_guard lock(mu_);
  TaskRecord r = t;
  r.id = next_task_id_++;
  r.created_at = NowRfc3339();
  r.ended_at.clear();
  tasks_.emplace(r.id, r);
  if (!context_tar_gz.empty()) task_contexts_[r.id] = context_tar_gz;
  return r.id;
}

Result<std::vector<TaskRecord>> MemoryStore::ListTasks(TaskKind kind, int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  std::lock_guard lock(mu_);
  std::vector<TaskRecord> out;
  for (auto it = tasks_.rbegin(); it != tasks_.rend() && static_cast<int64_t>(out.size()) < limit; ++it)
    if (it->second.kind == kind) out.push_back(it->second);
  return out;
}

Result<std::string> MemoryStore::GetTaskContext(int64_t id) {
  std::lock_guard lock(mu_);
  if (!tasks_.contains(id)) return NotFound("task " + std::to_string(id) + " not found");
  auto it = task_contexts_.find(id);
  return it == task_contexts_.end() ? std::string() : it->second;
}

Status MemoryStore::AddTaskLogs(const std::vector<LogRecord>& lines) {
  std::lock_guard lock(mu_);
  for (const LogRecord& l : lines)
    if (!tasks_.contains(l.task_id))
      return InvalidArgument("add logs of task " + std::to_string(l.task_id) + ": task does not exist");
  for (const LogRecord& l : lines) {
    LogRecord stored = l;
    stored.id = next_task_log_id_++;
    task_logs_[l.task_id].push_back(std::move(stored));
  }
  return Status::Ok();
}

Result<std::vector<LogRecord>> MemoryStore::GetTaskLogs(int64_t task_id, int rank, int64_t after_id,
                                                        int64_t limit) {
  if (Status s = CheckPage(limit, 0); !s.ok()) return s;
  std::lock_guard lock(mu_);
  std::vector<LogRecord> out;
  auto task = task_logs_.find(task_id);
  if (task == task_logs_.end()) return out;
  for (const LogRecord& l : task->second) {
    if (static_cast<int64_t>(out.size()) >= limit) break;
    if (l.id > after_id && (rank < 0 || l.rank == rank)) out.push_back(l);
  }
  return out;
}

Result<int64_t> MemoryStore::DeleteTaskLogs(int64_t task_id) {
  std::lock_guard lock(mu_);
  auto it = task_logs_.find(task_id);
  if (it == task_logs_.end()) return int64_t{0};
  const auto n = static_cast<int64_t>(it->second.size());
  task_logs_.erase(it);
  return n;
}

Result<std::vector<int64_t>> MemoryStore::ListEndedTasksWithLogs(const std::string& before) {
  std::lock_guard lock(mu_);
  std::vector<int64_t> out;
  for (const auto& [id, t] : tasks_)
    if (t.kind != TaskKind::kTrial && !t.ended_at.empty() && t.ended_at < before && task_logs_.contains(id))
      out.push_back(id);
  return out;
}

Result<TaskRecord> MemoryStore::GetTask(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(id) + " not found");
  TaskRecord r = it->second;
  if (const auto trial = trial_of_task_.find(id); trial != trial_of_task_.end() && r.ended_at.empty())
    r.ended_at = trials_.at(trial->second).ended_at;
  return r;
}

Status MemoryStore::EndTask(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(id) + " not found");
  if (it->second.ended_at.empty()) it->second.ended_at = NowRfc3339();
  return Status::Ok();
}

Result<int64_t> MemoryStore::CreateTrial(const TrialRecord& t) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  if (Status s = CheckTrial(t); !s.ok()) return s;
  if (!experiments_.contains(t.experiment_id)) {
    return InvalidArgument("create trial: experiment " + std::to_string(t.experiment_id) + " does not exist");
  }
  if (t.request_id)
    for (const auto& [id, other] : trials_)
      if (other.experiment_id == t.experiment_id && other.request_id == t.request_id)
        return Conflict("create trial: experiment " + std::to_string(t.experiment_id) +
                        " already has a trial for searcher request " + std::to_string(*t.request_id));
  TrialRecord r = t;
  r.id = next_trial_id_++;
  r.task_id = next_task_id_++;
  r.best_validation = StoredReal(r.best_validation);
  r.created_at = NowRfc3339();
  tasks_.emplace(r.task_id, TaskRecord{r.task_id, TaskKind::kTrial,
                                       experiments_.at(t.experiment_id).record.owner, r.created_at, ""});
  trial_of_task_.emplace(r.task_id, r.id);
  r.ended_at = EndedAt(IsTerminal(r.state), t.ended_at, "", r.created_at);
  trials_.emplace(r.id, r);
  return r.id;
}

TrialRecord MemoryStore::WithLogSignal(TrialRecord t) const {
  auto it = log_policy_matches_.find(t.id);
  if (it != log_policy_matches_.end() && !it->second.empty()) t.log_signal = it->second.back().policy;
  return t;
}

Result<TrialRecord> MemoryStore::GetTrial(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = trials_.find(id);
  if (it == trials_.end()) return NotFound("trial " + std::to_string(id) + " not found");
  return WithLogSignal(it->second);
}

Result<std::vector<TrialRecord>> MemoryStore::ListTrials(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  std::vector<TrialRecord> out;
  for (const auto& [id, t] : trials_)
    if (t.experiment_id == experiment_id) out.push_back(WithLogSignal(t));
  return out;
}

Status MemoryStore::UpdateTrial(const TrialRecord& t) {
  const WriteNotice changes(experiments_generation_);
  std::lock_guard lock(mu_);
  auto it = trials_.find(t.id);
  if (it == trials_.end()) return NotFound("trial " + std::to_string(t.id) + " not found");
  if (Status s = CheckTrial(t); !s.ok()) return s;
  TrialRecord& r = it->second;
  r.state = t.state;
  r.restarts = t.restarts;
  r.total_batches = std::max(r.total_batches, t.total_batches);
  r.best_validation = StoredReal(t.best_validation);
  r.latest_checkpoint = t.latest_checkpoint;
  r.ended_at = EndedAt(IsTerminal(t.state), t.ended_at, r.ended_at, NowRfc3339());
  return Status::Ok();
}

Status MemoryStore::CreateAllocation(const AllocationRecord& a) {
  std::lock_guard lock(mu_);
  if (a.id.empty()) return InvalidArgument("create allocation: id must not be empty");
  if (!IsKnown(a.state)) return InvalidArgument("create allocation " + a.id + ": unknown state");
  if (a.slots < 0) return InvalidArgument("create allocation " + a.id + ": slots must not be negative");
  if (allocation_index_.contains(a.id)) return Conflict("create allocation " + a.id + ": id already exists");
  if (!tasks_.contains(a.task_id)) {
    return InvalidArgument("create allocation " + a.id + ": task " + std::to_string(a.task_id) +
                           " does not exist");
  }
  const auto trial = trial_of_task_.find(a.task_id);
  if (a.trial_id != (trial == trial_of_task_.end() ? std::nullopt : std::optional<int64_t>(trial->second))) {
    return InvalidArgument("create allocation " + a.id + ": trial_id is not the trial of task " +
                           std::to_string(a.task_id));
  }
  AllocationRecord r = a;
  r.created_at = NowRfc3339();
  r.ended_at = EndedAt(IsTerminal(r.state), a.ended_at, "", r.created_at);
  allocation_index_.emplace(r.id, allocations_.size());
  allocations_.push_back(std::move(r));
  return Status::Ok();
}

Result<AllocationRecord> MemoryStore::GetAllocation(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = allocation_index_.find(id);
  if (it == allocation_index_.end()) return NotFound("allocation " + id + " not found");
  return allocations_[it->second];
}

Result<std::vector<AllocationRecord>> MemoryStore::ListAllocations(int64_t trial_id) {
  std::lock_guard lock(mu_);
  std::vector<AllocationRecord> out;
  for (const AllocationRecord& a : allocations_)
    if (a.trial_id == trial_id) out.push_back(a);
  return out;
}

Result<std::vector<AllocationRecord>> MemoryStore::ListTaskAllocations(int64_t task_id) {
  std::lock_guard lock(mu_);
  std::vector<AllocationRecord> out;
  for (const AllocationRecord& a : allocations_)
    if (a.task_id == task_id) out.push_back(a);
  return out;
}

Result<std::vector<AllocationRecord>> MemoryStore::ListLiveAllocations() {
  std::lock_guard lock(mu_);
  std::vector<AllocationRecord> out;
  for (const AllocationRecord& a : allocations_)
    if (a.state != AllocationState::kTerminated) out.push_back(a);
  return out;
}

Status MemoryStore::UpdateAllocation(const AllocationRecord& a) {
  std::lock_guard lock(mu_);
  auto it = allocation_index_.find(a.id);
  if (it == allocation_index_.end()) return NotFound("allocation " + a.id + " not found");
  if (!IsKnown(a.state)) return InvalidArgument("update allocation " + a.id + ": unknown state");
  AllocationRecord& r = allocations_[it->second];
  r.state = a.state;
  r.token_hash = a.token_hash;
  r.placements = a.placements;
  r.processes = a.processes;
  r.end_cause = a.end_cause;
  r.exit_reason = a.exit_reason;
  r.exit_code = a.exit_code;
  r.ended_at = EndedAt(IsTerminal(a.state), a.ended_at, r.ended_at, NowRfc3339());
  return Status::Ok();
}

}  // namespace ring
