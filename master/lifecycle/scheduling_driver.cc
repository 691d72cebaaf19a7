#include "master/lifecycle/scheduling_driver.h"

#include <algorithm>
#include <tuple>

#include <spdlog/spdlog.h>

#include "common/searcher/asha_plan.h"
#include "master/lifecycle/checkpoints.h"
#include "master/lifecycle/log_policies.h"
#include "master/lifecycle/rank_events.h"
#include "master/lifecycle/tasks.h"
#include "master/lifecycle/trials.h"
#include "master/scheduler/rank_order.h"

namespace ring {
namespace {

// searcher.max_length as the config gives it (docs/environment.md): the
// determined package hands out operation lengths in this unit, as Determined
// does. RING_OPERATION_LENGTHS maps each operation length in batches to its
// length in the unit ("938:1,4688:5,18750:20"): ASHA plans rungs in the unit.
void AddLengthUnit(const SearcherConfig& searcher, std::map<std::string, std::string>& env) {
  if (!searcher.max_length) return;
  env["RING_MAX_LENGTH_VALUE"] = std::to_string(searcher.max_length->value);
  if (!searcher.max_length->bare) env["RING_MAX_LENGTH_UNIT"] = ToString(searcher.max_length->unit);
  std::string lengths;
  for (const auto& [batches, length] : search::OperationUnitLengths(searcher))
    lengths += (lengths.empty() ? "" : ",") + std::to_string(batches) + ":" + std::to_string(length);
  if (!lengths.empty()) env["RING_OPERATION_LENGTHS"] = lengths;
}

}  // namespace

SchedulingDriver::SchedulingDriver(Store& store, Allocations& allocations, ExperimentSettings& settings,
                                   Trials& trials, Tasks& tasks, RankEvents& ranks, LogPolicies& log_policies,
                                   ResourceManager& rm, std::vector<PoolSettings> pools,
                                   PassObserver observer)
    : store_(store),
      allocations_(allocations),
      settings_(settings),
      trials_(trials),
      tasks_(tasks),
      ranks_(ranks),
      log_policies_(log_policies),
      rm_(rm),
      pools_(std::move(pools)),
      observer_(std::move(observer)) {}

void SchedulingDriver::RunIfDirty(SteadyTime now) {
  if (!dirty()) return;
  std::set<std::string> pools;
  if (all_dirty_) {
    for (const auto& p : pools_) pools.insert(p.name);
    for (const auto& [id, alloc] : allocations_.live()) pools.insert(alloc.pool);
  } else {
    pools = dirty_;
  }
  dirty_.clear();
  all_dirty_ = false;
  for (const auto& pool : pools) Pass(pool, now);
}

SchedulingDriver::Demand SchedulingDriver::DemandOf(const LiveAllocation& alloc) {
  Demand d;
  if (!alloc.is_trial()) {
    d.group = -alloc.record.task_id;  // each task is its own group; experiment ids are positive
    d.single_node = true;
    if (const TaskSpec* spec = tasks_.Spec(alloc.record.task_id)) {
      d.priority = static_cast<int>(spec->priority);
      d.weight = spec->weight;
      if (spec->environment.HasImage())
        d.container = ContainerNeed{RuntimeOf(alloc.pool), !spec->environment.cpu_image.empty(),
                                    !spec->environment.cuda_image.empty()};
    }
    return d;
  }
  const EffectiveResources r = settings_.Resources(alloc.experiment_id);
  d.group = alloc.experiment_id;
  d.priority = static_cast<int>(r.priority);
  d.weight = r.weight;
  if (r.max_slots) d.max_slots = static_cast<int>(*r.max_slots);
  d.single_node = r.single_node;
  d.container = ContainerNeedOf(alloc.experiment_id, alloc.pool);
  return d;
}

// One pass of the pool's policy over its nodes, its queue (in queue order)
// and its running allocations; then starts what it assigned and asks the
// victims it chose to checkpoint and stop.
void SchedulingDriver::Pass(const std::string& pool, SteadyTime now) {
  // What earlier passes said of allocations that have left the queue.
  std::erase_if(pending_reasons_, [&](const auto& e) { return !IsQueued(e.first); });
  std::erase_if(pass_positions_, [&](const auto& e) { return !IsQueued(e.first); });
  PoolInput input;
  input.pool = pool;
  int64_t seq = 0;
  for (const auto& id : allocations_.queue()) {
    ++seq;
    const LiveAllocation& alloc = allocations_.live().at(id);
    if (alloc.pool != pool) continue;
    pending_reasons_.erase(id);
    pass_positions_.erase(id);
    Demand d = DemandOf(alloc);
    input.pending.push_back(
        {id, d.group, alloc.world_size, d.priority, d.weight, d.max_slots, seq, d.single_node,
         alloc.is_trial() ? log_policies_.ExcludedNodes(alloc.experiment_id, alloc.trial_id())
                          : std::vector<std::string>{},
         std::move(d.container), !alloc.is_trial()});
  }
  if (input.pending.empty()) {
    schedulers_.erase(pool);  // nothing to keep: what it kept would only hold memory
    return;
  }
  // The agents only when something waits: every agent's hello marks its
  // pool dirty, and listing 10,000 agents for each of 10,000 hellos that
  // find an empty queue was most of the master's work while they connect.
  for (auto& view : rm_.Offers())
    if (view.pool == pool) input.agents.push_back(std::move(view));
  for (const auto& [id, alloc] : allocations_.live()) {
    if (alloc.pool != pool || alloc.pending() || alloc.placements().empty()) continue;
    const Demand d = DemandOf(alloc);
    RunningAllocation running;
    running.allocation_id = id;
    running.experiment_id = d.group;
    running.slots = alloc.world_size;
    running.priority = d.priority;
    running.weight = d.weight;
    running.max_slots = d.max_slots;
    running.started_seq = alloc.started_seq;
    // Trials checkpoint and exit when asked, other tasks only when their
    // spec says they may be preempted; one the master is already stopping
    // is leaving anyway and is not stopped twice.
    running.preemptible = alloc.preemptible && !alloc.stop_cause;
    running.preempting = alloc.preemption.requested() || alloc.stop_cause.has_value();
    running.placements = alloc.placements();
    input.running.push_back(std::move(running));
  }
  for (const auto& p : pools_) {
    if (p.name != pool) continue;
    input.policy.type =
        p.scheduler == "fair_share" ? PoolPolicy::Type::kFairShare : PoolPolicy::Type::kPriority;
    input.policy.preemption = p.preemption;
    input.policy.fit = p.fitting_policy == "worst" ? PoolPolicy::Fit::kWorst : PoolPolicy::Fit::kBest;
  }
  const auto pass_start = std::chrono::steady_clock::now();
  // The pass hands back the pool's previous input, freed here at the end.
  const PoolDecision& decision = schedulers_[pool].Schedule(input);
  if (observer_)
    observer_(pool, std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count());
  for (const auto& [id, reason] : decision.pending_reasons) pending_reasons_[id] = reason;
  for (size_t i = 0; i < decision.order.size(); ++i)
    pass_positions_[decision.order[i]] = static_cast<int>(i) + 1;
  for (const auto& victim : decision.preempt) {
    LiveAllocation* alloc = allocations_.Find(victim);
    if (!alloc) continue;
    const auto why = decision.preempted_for.count(victim) ? decision.preempted_for.at(victim) : "";
    spdlog::info("[scheduler] pool {}: preempting allocation {} to make room for {}", pool, victim, why);
    allocations_.RequestPreemption(*alloc, EndCause::kPreempted, now,
                                   ranks_.PreemptionTimeout(alloc->experiment_id));
  }
  for (const auto& assignment : decision.assignments) {
    LiveAllocation* alloc = allocations_.Find(assignment.allocation_id);
    if (!alloc) continue;
    pending_reasons_.erase(assignment.allocation_id);
    Launch(*alloc, assignment);
  }
}

bool SchedulingDriver::IsQueued(const std::string& allocation_id) {
  const LiveAllocation* alloc = allocations_.Find(allocation_id);
  return alloc && alloc->pending();
}

void SchedulingDriver::Launch(LiveAllocation& alloc, const Assignment& assignment) {
  // The launch is prepared before anything is held: an allocation whose
  // trial or config cannot be read ends (and its trial is restarted or
  // fails) instead of holding its slots with nothing started.
  auto spec = alloc.is_trial() ? SpecFor(alloc) : TaskSpecFor(alloc);
  if (!spec.ok()) {
    spdlog::error("[scheduler] allocation {} cannot start: {}", alloc.record.id, spec.status().message());
    allocations_.End(alloc.record.id, EndCause::kFailed, "cannot start: " + spec.status().message());
    return;
  }
  std::vector<Placement> placements = assignment.placements;
  OrderPlacementsForRanks(placements);  // recorded in rank order, so a recovery keeps it
  const int processes = spec->launch == LaunchMode::kPerNode ? static_cast<int>(placements.size()) : 0;
  auto token = allocations_.Assign(alloc, std::move(placements), processes);
  if (!token.ok()) {
    spdlog::error("[scheduler] allocation {}: cannot record assignment: {}", alloc.record.id,
                  token.status().message());
    MarkDirty(alloc.pool);
    return;
  }
  spec->token = *token;
  spec->placements = alloc.placements();
  spec->master_port = alloc.master_port;
  rm_.Launch(*spec);
}

Status SchedulingDriver::AddOwner(int64_t task_id, LaunchSpec& spec) {
  auto task = store_.GetTask(task_id);
  if (!task.ok()) return task.status();
  spec.owner = task->owner;
  auto user = store_.GetUserByName(task->owner);
  if (!user.ok() && user.status().code() != ErrorCode::kNotFound) return user.status();
  if (user.ok() && user->unix_account) {
    const UserUnixAccount& a = *user->unix_account;
    spec.run_as = proto::RunAs{a.uid, a.gid, a.user, a.group};
  }
  return Status::Ok();
}

LaunchMode SchedulingDriver::LaunchModeOf(int64_t experiment_id, const std::string& pool) const {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!config) return LaunchMode::kPerSlot;
  LaunchMode pool_default = LaunchMode::kAuto;
  for (const auto& p : pools_)
    if (p.name == pool) pool_default = p.launch;
  return ResolveLaunchMode(config->resources.launch, pool_default, config->entrypoint);
}

std::string SchedulingDriver::RuntimeOf(const std::string& pool) const {
  for (const auto& p : pools_)
    if (p.name == pool) return p.container_runtime;
  return "";
}

std::optional<ContainerNeed> SchedulingDriver::ContainerNeedOf(int64_t experiment_id,
                                                               const std::string& pool) const {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (!config || !config->environment.HasImage()) return std::nullopt;
  return ContainerNeed{RuntimeOf(pool), !config->environment.cpu_image.empty(),
                       !config->environment.cuda_image.empty()};
}

int SchedulingDriver::ProcessCount(const LiveAllocation& alloc) const {
  if (!alloc.is_trial()) return static_cast<int>(alloc.placements().size());  // one process per agent
  return LaunchModeOf(alloc.experiment_id, alloc.pool) == LaunchMode::kPerNode
             ? static_cast<int>(alloc.placements().size())
             : alloc.world_size;
}

Result<LaunchSpec> SchedulingDriver::SpecFor(const LiveAllocation& alloc) {
  auto trial = trials_.Get(alloc.trial_id());
  if (!trial.ok()) return trial.status();
  const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
  if (!config)
    return Internal("the config of experiment " + std::to_string(alloc.experiment_id) + " cannot be read");
  LaunchSpec spec;
  spec.allocation_id = alloc.record.id;
  spec.trial_id = alloc.trial_id();
  spec.experiment_id = alloc.experiment_id;
  spec.world_size = alloc.world_size;
  spec.priority = settings_.Resources(alloc.experiment_id).priority;
  spec.launch = LaunchModeOf(alloc.experiment_id, alloc.pool);
  spec.entrypoint = config->entrypoint;
  spec.entrypoint_argv = config->entrypoint_argv;
  spec.hparams_json = trial->hparams_json;
  spec.environment = config->environment.variables;
  spec.cpu_environment = config->environment.cpu_variables;
  spec.cuda_environment = config->environment.cuda_variables;
  // The config's `data`, for every rank (docs/environment.md).
  spec.environment["RING_DATA"] = config->data.dump();
  const auto storage = settings_.StorageOf(*config);
  // The trial runtime's contract (trial_runtime: MakeCheckpointStorage).
  spec.environment["RING_CHECKPOINT_STORAGE"] = nlohmann::json{
      {"type", storage.type},
      {"host_path", storage.host_path},
      {"storage_path", storage.storage_path}}.dump();
  // The checkpoint folder at its own path: RING_CHECKPOINT_STORAGE and
  // RING_LATEST_CHECKPOINT name host paths.
  AddContainers(config->environment, config->bind_mounts, alloc.pool, storage.host_path, spec);
  if (!trial->latest_checkpoint.empty()) {
    CheckpointRecord ref;
    ref.uuid = trial->latest_checkpoint;
    ref.storage = storage;
    if (auto stored = store_.GetCheckpoint(trial->latest_checkpoint); stored.ok()) ref = *stored;
    spec.latest_checkpoint = Checkpoints::Dir(ref);
  }
  spec.environment["RING_MIN_CHECKPOINT_PERIOD_BATCHES"] =
      std::to_string(config->min_checkpoint_period_batches);
  spec.environment["RING_MIN_VALIDATION_PERIOD_BATCHES"] =
      std::to_string(config->min_validation_period_batches);
  spec.environment["RING_MAX_LENGTH_BATCHES"] = std::to_string(config->searcher.max_length_batches);
  AddLengthUnit(config->searcher, spec.environment);
  spec.environment["RING_SEARCHER_METRIC"] = config->searcher.metric;
  // Trial-driven contract (docs/searchers.md): the trial reports this metric
  // in its validations and may train up to max_time of it.
  if (config->searcher.time_metric) {
    spec.environment["RING_SEARCHER_TIME_METRIC"] = *config->searcher.time_metric;
    spec.environment["RING_SEARCHER_MAX_TIME"] = std::to_string(config->searcher.max_time);
  }
  spec.environment["RING_TRIAL_SEED"] = std::to_string(trial->seed);
  spec.model_definition_path = "/api/v1/allocations/" + alloc.record.id + "/model_definition";
  // Every task runs as its owner: the agent switches to the owner's linked
  // Unix account, or to its unprivileged default when there is none.
  if (Status s = AddOwner(alloc.record.task_id, spec); !s.ok()) return s;
  return spec;
}

void SchedulingDriver::AddContainers(const EnvironmentConfig& env, const std::vector<BindMount>& mounts,
                                     const std::string& pool, const std::string& checkpoint_path,
                                     LaunchSpec& spec) const {
  if (!env.HasImage()) return;
  proto::Container c;
  c.runtime = RuntimeOf(pool);
  c.force_pull = env.force_pull_image;
  if (const auto& auth = env.registry_auth)
    for (auto [key, value] :
         {std::pair{"username", &auth->username}, std::pair{"password", &auth->password},
          std::pair{"serveraddress", &auth->serveraddress}, std::pair{"email", &auth->email},
          std::pair{"auth", &auth->auth}, std::pair{"identitytoken", &auth->identitytoken},
          std::pair{"registrytoken", &auth->registrytoken}})
      if (!value->empty()) c.registry_auth[key] = *value;
  c.checkpoint_path = checkpoint_path;
  for (const auto& m : mounts)
    c.mounts.push_back({m.host_path, m.container_path, m.read_only, m.propagation});
  if (!env.cpu_image.empty()) {
    spec.cpu_container = c;
    spec.cpu_container->image = env.cpu_image;
  }
  if (!env.cuda_image.empty()) {
    spec.cuda_container = c;
    spec.cuda_container->image = env.cuda_image;
  }
}

Result<LaunchSpec> SchedulingDriver::TaskSpecFor(const LiveAllocation& alloc) {
  const TaskSpec* task = tasks_.Spec(alloc.record.task_id);
  if (!task) return Internal("the spec of task " + std::to_string(alloc.record.task_id) + " cannot be read");
  LaunchSpec spec;
  spec.allocation_id = alloc.record.id;
  spec.task_id = alloc.record.task_id;
  spec.task_kind = alloc.kind;
  spec.world_size = alloc.world_size;
  spec.priority = task->priority;
  spec.launch = LaunchMode::kPerNode;  // one process, with all its slots
  spec.entrypoint_argv = task->argv;
  for (const auto& arg : task->argv) spec.entrypoint += (spec.entrypoint.empty() ? "" : " ") + arg;
  spec.environment = task->environment.variables;
  spec.cpu_environment = task->environment.cpu_variables;
  spec.cuda_environment = task->environment.cuda_variables;
  AddContainers(task->environment, task->bind_mounts, alloc.pool, "", spec);
  if (task->has_context)
    spec.model_definition_path = "/api/v1/allocations/" + alloc.record.id + "/model_definition";
  // As a trial: the owner's linked Unix account, or the agent's unprivileged default.
  if (Status s = AddOwner(alloc.record.task_id, spec); !s.ok()) return s;
  return spec;
}

std::vector<JobRow> SchedulingDriver::Jobs() {
  struct Key {
    std::string pool;
    bool pending = false;
    int64_t rank = 0;  // started_seq, or place in the pass order
    std::string id;
  };
  std::vector<Key> keys;
  const auto& queue = allocations_.queue();
  for (size_t i = 0; i < queue.size(); ++i) {
    auto pos = pass_positions_.find(queue[i]);
    const int64_t rank = pos != pass_positions_.end() ? pos->second : static_cast<int64_t>(queue.size() + i);
    keys.push_back({allocations_.live().at(queue[i]).pool, true, rank, queue[i]});
  }
  for (const auto& [id, alloc] : allocations_.live())
    if (!alloc.pending()) keys.push_back({alloc.pool, false, alloc.started_seq, id});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.pool, a.pending, a.rank, a.id) < std::tie(b.pool, b.pending, b.rank, b.id);
  });
  std::vector<JobRow> rows;
  std::string pool;
  int position = 0;
  for (const auto& key : keys) {
    const LiveAllocation& alloc = allocations_.live().at(key.id);
    const Demand d = DemandOf(alloc);
    std::string owner;
    if (alloc.is_trial()) {
      if (auto exp = store_.GetExperiment(alloc.experiment_id); exp.ok()) owner = exp->owner;
    } else if (auto task = store_.GetTask(alloc.record.task_id); task.ok()) {
      owner = task->owner;
    }
    JobRow row{key.id,
               alloc.kind,
               alloc.record.task_id,
               alloc.is_trial() ? alloc.trial_id() : 0,
               alloc.experiment_id,
               owner,
               alloc.record.state,
               alloc.world_size,
               alloc.pool,
               d.priority,
               d.weight,
               alloc.record.created_at,
               alloc.preemption.requested() || (!alloc.is_trial() && alloc.stop_cause.has_value()),
               std::nullopt,
               std::nullopt};
    if (key.pool != pool) position = 0;
    pool = key.pool;
    if (key.pending) {
      row.position = ++position;
      auto reason = pending_reasons_.find(key.id);
      row.reason = reason != pending_reasons_.end()
                       ? reason->second
                       : "queued; the next scheduling pass places or explains it";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ring
