#include "master/core/experiment_controller.h"

#include <random>

#include <spdlog/spdlog.h>

#include "common/archive.h"

namespace ring {

ExperimentController::ExperimentController(Store& store, ControllerOptions options)
    : store_(store), options_(options), log_limiter_(options.log_limits) {}

const ExperimentConfig* ExperimentController::ConfigLocked(int64_t experiment_id) {
  if (auto it = configs_.find(experiment_id); it != configs_.end()) return &it->second;
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return nullptr;
  auto config = ParseExperimentConfig(exp->config_yaml);
  if (!config.ok()) {
    spdlog::error("[controller] experiment {}: stored config no longer parses: {}", experiment_id,
                  config.status().message());
    return nullptr;
  }
  return &configs_.emplace(experiment_id, std::move(config).value()).first->second;
}

Result<int64_t> ExperimentController::CreateExperiment(const std::string& config_yaml,
                                                       const std::string& model_tar_gz, bool activate,
                                                       const std::string& owner) {
  auto config = ParseExperimentConfig(config_yaml);
  if (!config.ok()) return config.status();
  {
    std::lock_guard lock(mu_);
    if (Status s = CheckPoolLocked(config->resources); !s.ok()) return s;
  }
  const uint64_t seed = config->experiment_seed
                            ? static_cast<uint64_t>(*config->experiment_seed)
                            : (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  auto searcher = search::Searcher::Create(config->searcher, config->hyperparameters, seed);
  if (!searcher.ok()) return searcher.status();
  if (model_tar_gz.size() > options_.max_model_bytes)
    return Status(ErrorCode::kTooLarge, "model_definition is " + std::to_string(model_tar_gz.size()) +
                                            " bytes, over the limit of " +
                                            std::to_string(options_.max_model_bytes));
  if (Status s = ValidateArchive(model_tar_gz); !s.ok())
    return InvalidArgument("model_definition is not a valid tar.gz: " + s.message());

  std::lock_guard lock(mu_);
  ExperimentRecord exp;
  exp.name = config->name;
  exp.owner = owner;
  exp.config_yaml = config_yaml;
  exp.state = activate ? RunState::kActive : RunState::kPaused;
  auto id = store_.CreateExperiment(exp, model_tar_gz);
  if (!id.ok()) return id.status();
  exp.id = *id;
  configs_[exp.id] = *config;
  spdlog::info("[controller] experiment {} created ({}), searcher {}", exp.id, exp.name,
               config->searcher.name);
  // The searcher's first decisions and the trials they create are one step.
  searches_.emplace(exp.id, ExperimentSearch{std::move(searcher).value(), {}, {}});
  SearchEventLocked(exp.id, [](search::Searcher& s) { return s.Start(); });
  ScheduleLocked();
  return exp.id;
}

Status ExperimentController::QueueAllocationLocked(const TrialRecord& trial, const std::string& pool,
                                                   int slots) {
  auto previous = store_.ListAllocations(trial.id);
  if (!previous.ok()) return previous.status();
  LiveAllocation alloc;
  alloc.record.id = std::to_string(trial.id) + "." + std::to_string(previous->size());
  alloc.record.trial_id = trial.id;
  alloc.record.state = AllocationState::kPending;
  alloc.record.slots = slots;
  if (Status s = store_.CreateAllocation(alloc.record); !s.ok()) return s;
  alloc.record.created_at = NowRfc3339();  // the store's own is the same to the millisecond or so
  alloc.experiment_id = trial.experiment_id;
  alloc.pool = pool;
  alloc.world_size = slots;
  pending_.push_back(alloc.record.id);
  spdlog::info("[controller] trial {} allocation {} queued for {} slots in pool {}", trial.id,
               alloc.record.id, slots, pool);
  live_.emplace(alloc.record.id, std::move(alloc));
  return Status::Ok();
}

Status ExperimentController::TransitionExperimentLocked(ExperimentRecord& exp, RunState to) {
  if (exp.state == to) return Status::Ok();
  if (!CanTransition(exp.state, to))
    return Conflict("experiment " + std::to_string(exp.id) + " is " + std::string(ToString(exp.state)) +
                    " and cannot become " + std::string(ToString(to)));
  exp.state = to;
  if (IsTerminal(to)) exp.ended_at = NowRfc3339();
  if (Status s = store_.UpdateExperiment(exp); !s.ok()) return s;
  spdlog::info("[controller] experiment {} -> {}", exp.id, ToString(to));
  return Status::Ok();
}

Status ExperimentController::Kill(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (IsTerminal(exp->state)) return Status::Ok();
  if (exp->state != RunState::kStoppingCanceled)
    if (Status s = TransitionExperimentLocked(*exp, RunState::kStoppingCanceled); !s.ok()) return s;
  std::vector<std::string> ids;
  for (auto& [id, alloc] : live_)
    if (alloc.experiment_id == experiment_id) ids.push_back(id);
  for (const auto& id : ids) StopAllocationLocked(live_.at(id), "killed by user");
  // Trials with nothing running (paused, or waiting for the searcher) end now.
  if (Status s = SetIdleTrialsLocked(experiment_id, RunState::kCanceled); !s.ok()) return s;
  FinishExperimentIfDoneLocked(experiment_id);
  return Status::Ok();
}

Status ExperimentController::Pause(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (Status s = TransitionExperimentLocked(*exp, RunState::kPaused); !s.ok()) return s;
  std::vector<std::string> ids;
  for (auto& [id, alloc] : live_)
    if (alloc.experiment_id == experiment_id) ids.push_back(id);
  const auto now = std::chrono::steady_clock::now();
  for (const auto& id : ids) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    // Waiting ones just leave the queue; running ones checkpoint and exit.
    if (it->second.record.state == AllocationState::kPending)
      StopAllocationLocked(it->second, "paused");
    else
      RequestPreemptionLocked(it->second, now);
  }
  // Trials waiting for the searcher hold nothing; they are paused at once.
  return SetIdleTrialsLocked(experiment_id, RunState::kPaused);
}

Status ExperimentController::SetIdleTrialsLocked(int64_t experiment_id, RunState to) {
  std::set<int64_t> running;
  for (const auto& [id, alloc] : live_)
    if (alloc.experiment_id == experiment_id) running.insert(alloc.record.trial_id);
  auto trials = store_.ListTrials(experiment_id);
  if (!trials.ok()) return trials.status();
  for (auto& t : *trials) {
    if (IsTerminal(t.state) || t.state == to || running.count(t.id)) continue;
    t.state = to;
    if (IsTerminal(to)) t.ended_at = NowRfc3339();
    if (Status s = store_.UpdateTrial(t); !s.ok()) return s;
  }
  return Status::Ok();
}

Status ExperimentController::Activate(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (exp->state == RunState::kActive) return Status::Ok();
  if (Status s = TransitionExperimentLocked(*exp, RunState::kActive); !s.ok()) return s;
  const ExperimentConfig* config = ConfigLocked(experiment_id);
  auto trials = store_.ListTrials(experiment_id);
  if (!trials.ok()) return trials.status();
  const bool searched = SearchLocked(experiment_id) != nullptr;
  for (auto& trial : *trials) {
    if (trial.state != RunState::kPaused) continue;
    bool has_live = false;
    for (auto& [id, alloc] : live_) has_live |= alloc.record.trial_id == trial.id;
    trial.state = RunState::kActive;
    if (Status s = store_.UpdateTrial(trial); !s.ok()) return s;
    if (!searched && !has_live && config)
      if (Status s = QueueAllocationLocked(trial, config->resources.resource_pool,
                                           static_cast<int>(config->resources.slots_per_trial));
          !s.ok())
        return s;
  }
  // Trials with an operation and nothing running go back in the queue.
  if (searched) ReconcileSearchLocked(experiment_id);
  ScheduleLocked();
  return Status::Ok();
}

Status ExperimentController::SetArchived(int64_t experiment_id, bool archived) {
  std::lock_guard lock(mu_);
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (archived && !IsTerminal(exp->state))
    return Conflict("experiment " + std::to_string(experiment_id) + " is " +
                    std::string(ToString(exp->state)) + "; only ended experiments can be archived");
  exp->archived = archived;
  return store_.UpdateExperiment(*exp);
}

void ExperimentController::FinishExperimentIfDoneLocked(int64_t experiment_id) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok() || IsTerminal(exp->state)) return;
  auto trials = store_.ListTrials(experiment_id);
  if (!trials.ok()) return;
  // A search that may still create trials is not done.
  if (exp->state != RunState::kStoppingCanceled)
    if (auto it = searches_.find(experiment_id); it != searches_.end() && !it->second.searcher.IsShutdown())
      return;
  int completed = 0;
  int errored = 0;
  for (const auto& t : *trials) {
    if (!IsTerminal(t.state)) return;
    completed += t.state == RunState::kCompleted;
    errored += t.state == RunState::kError;
  }
  RunState final_state = RunState::kCompleted;
  if (exp->state == RunState::kStoppingCanceled)
    final_state = RunState::kCanceled;
  else if (completed == 0 && errored > 0)
    final_state = RunState::kError;
  if (final_state == RunState::kCompleted) exp->progress = 1.0;
  if (!CanTransition(exp->state, final_state) && exp->state != final_state) {
    // e.g. PAUSED with every trial ended: stop through the error or cancel edge.
    final_state = final_state == RunState::kCompleted ? RunState::kCanceled : final_state;
  }
  if (Status s = TransitionExperimentLocked(*exp, final_state); !s.ok())
    spdlog::error("[controller] experiment {}: {}", experiment_id, s.message());
}

nlohmann::json ExperimentController::AgentsJson() {
  std::vector<AgentEntry> agents;
  {
    std::lock_guard lock(mu_);
    agents = agents_.Snapshot();
  }
  return AgentRegistry::AgentsJson(agents);  // after the lock: heartbeats need not wait
}

}  // namespace ring
