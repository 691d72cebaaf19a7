#include "master/lifecycle/experiments.h"

#include <random>

#include <spdlog/spdlog.h>

#include "common/archive.h"
#include "common/bind_mount_rule.h"

namespace ring {

Experiments::Experiments(Store& store, ExperimentSettings& settings, Trials& trials, Allocations& allocations,
                         Searches& searches, RankEvents& ranks, ResourceManager& rm,
                         const std::vector<PoolSettings>& pools, uint64_t max_model_bytes,
                         std::vector<std::string> own_dirs)
    : store_(store),
      settings_(settings),
      trials_(trials),
      allocations_(allocations),
      searches_(searches),
      ranks_(ranks),
      rm_(rm),
      declared_pools_([&] {
        std::vector<std::string> names;
        for (const auto& p : pools) names.push_back(p.name);
        return names;
      }()),
      pool_runtimes_([&] {
        std::map<std::string, std::string> runtimes;
        for (const auto& p : pools) runtimes[p.name] = p.container_runtime;
        return runtimes;
      }()),
      own_dirs_(std::move(own_dirs)),
      max_model_bytes_(max_model_bytes) {}

Status Experiments::CheckBindMounts(const ExperimentConfig& config) const {
  // Without an image a mount is the host folder at its own path: nothing is mounted.
  if (!config.environment.HasImage()) return Status::Ok();
  for (size_t i = 0; i < config.bind_mounts.size(); ++i) {
    const BindMount& m = config.bind_mounts[i];
    if (const auto dir = ReachedOwnDir(m.host_path, own_dirs_))
      return Status(ErrorCode::kInvalidConfig, "experiment.yaml:" + std::to_string(m.line) +
                                                   ": bind_mounts[" + std::to_string(i) + "].host_path " +
                                                   m.host_path + " reaches the master's own folder " + *dir +
                                                   ", which trials may not mount");
  }
  return Status::Ok();
}

Status Experiments::CheckImage(const ExperimentConfig& config) const {
  if (!config.environment.HasImage()) return Status::Ok();
  const std::string& pool = config.resources.resource_pool;
  const auto required = pool_runtimes_.find(pool);
  Status s = rm_.CheckContainers(pool, required == pool_runtimes_.end() ? "" : required->second);
  if (s.ok()) return s;
  return Status(ErrorCode::kInvalidConfig,
                "experiment.yaml:" + std::to_string(config.environment.image_line) +
                    ": environment.image: " + s.message());
}

namespace {

// A master check's failure as an issue: "experiment.yaml:N: <message>" gives
// its line, and a message that starts with a key below `path`
// ("resources.is_single_node: ...") its path.
ConfigIssue IssueOf(const Status& s, const std::string& path) {
  ConfigIssue issue{path, 0, s.message()};
  const std::string prefix = "experiment.yaml:";
  if (s.message().rfind(prefix, 0) == 0) {
    const size_t colon = s.message().find(": ", prefix.size());
    if (colon != std::string::npos) {
      issue.line = std::atoi(s.message().substr(prefix.size(), colon - prefix.size()).c_str());
      issue.message = s.message().substr(colon + 2);
    }
  }
  const size_t end = issue.message.find(": ");
  if (issue.message.rfind(path + ".", 0) == 0 && end != std::string::npos &&
      issue.message.find(' ') == end + 1)
    issue.path = issue.message.substr(0, end);
  return issue;
}

}  // namespace

ConfigCheck Experiments::Check(const std::string& config_yaml, const Submitter& who) const {
  ConfigCheck check = CheckExperimentConfig(config_yaml);
  if (!check.config) return check;
  const ExperimentConfig& config = *check.config;
  if (Status s = settings_.CheckStorage(config); !s.ok())
    check.errors.push_back(IssueOf(s, "checkpoint_storage"));
  if (Status s = rm_.CheckFits(config.resources, declared_pools_); !s.ok())
    check.errors.push_back(IssueOf(s, "resources"));
  if (Status s = CheckImage(config); !s.ok()) check.errors.push_back(IssueOf(s, "environment.image"));
  if (Status s = CheckBindMounts(config); !s.ok()) check.errors.push_back(IssueOf(s, "bind_mounts"));
  if (auto searcher = search::Searcher::Create(config.searcher, config.hyperparameters, 1); !searcher.ok())
    check.errors.push_back(IssueOf(searcher.status(), "searcher"));
  if (auto source = ResolveWarmStart(store_, config, who); !source.ok())
    check.errors.push_back(IssueOf(source.status(), config.searcher.source_trial_id
                                                        ? "searcher.source_trial_id"
                                                        : "searcher.source_checkpoint_uuid"));
  if (!check.errors.empty()) check.config.reset();
  return check;
}

Result<int64_t> Experiments::Create(const std::string& config_yaml, const std::string& model_tar_gz,
                                    bool activate, const Submitter& who, std::vector<ConfigIssue>* warnings,
                                    std::optional<int64_t> parent_id) {
  ConfigCheck check = CheckExperimentConfig(config_yaml);
  if (!check.config) return Status(ErrorCode::kInvalidConfig, check.ErrorText());
  if (warnings) *warnings = check.warnings;
  auto config = Result<ExperimentConfig>(std::move(*check.config));
  if (Status s = settings_.CheckStorage(*config); !s.ok()) return s;
  if (Status s = rm_.CheckFits(config->resources, declared_pools_); !s.ok()) return s;
  if (Status s = CheckImage(*config); !s.ok()) return s;
  if (Status s = CheckBindMounts(*config); !s.ok()) return s;
  const uint64_t seed = config->experiment_seed
                            ? static_cast<uint64_t>(*config->experiment_seed)
                            : (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  auto searcher = search::Searcher::Create(config->searcher, config->hyperparameters, seed);
  if (!searcher.ok()) return searcher.status();
  if (model_tar_gz.size() > max_model_bytes_)
    return Status(ErrorCode::kTooLarge, "model_definition is " + std::to_string(model_tar_gz.size()) +
                                            " bytes, over the limit of " + std::to_string(max_model_bytes_));
  if (Status s = ValidateArchive(model_tar_gz); !s.ok())
    return InvalidArgument("model_definition is not a valid tar.gz: " + s.message());
  auto source = ResolveWarmStart(store_, *config, who);
  if (!source.ok()) return source.status();

  ExperimentRecord exp;
  exp.name = config->name;
  exp.owner = who.username;
  exp.warm_start_checkpoint = *source;
  exp.parent_id = parent_id;
  exp.project_id = who.project_id;
  exp.config_yaml = config_yaml;
  exp.state = activate ? RunState::kActive : RunState::kPaused;
  auto id = store_.CreateExperiment(exp, model_tar_gz);
  if (!id.ok()) return id.status();
  spdlog::info(
      "[experiments] experiment {} created ({}), searcher {}{}", *id, exp.name, config->searcher.name,
      exp.warm_start_checkpoint.empty() ? "" : ", warm start from checkpoint " + exp.warm_start_checkpoint);
  settings_.Remember(*id, *std::move(config));
  searches_.Begin(*id, std::move(searcher).value());
  return *id;
}

Status Experiments::Transition(ExperimentRecord& exp, RunState to) {
  if (exp.state == to) return Status::Ok();
  if (!CanTransition(exp.state, to))
    return Conflict("experiment " + std::to_string(exp.id) + " is " + std::string(ToString(exp.state)) +
                    " and cannot become " + std::string(ToString(to)));
  const RunState from = exp.state;
  exp.state = to;
  if (IsTerminal(to)) exp.ended_at = NowRfc3339();
  if (Status s = store_.UpdateExperiment(exp); !s.ok()) {
    exp.state = from;
    return s;
  }
  spdlog::info("[experiments] experiment {} {} -> {}", exp.id, ToString(from), ToString(to));
  if (on_state_changed_) on_state_changed_(exp, from);
  if (IsTerminal(to) && on_ended_) on_ended_(exp);
  return Status::Ok();
}

std::set<int64_t> Experiments::LiveTrials(int64_t experiment_id) const {
  std::set<int64_t> running;
  for (const auto& [id, alloc] : allocations_.live())
    if (alloc.experiment_id == experiment_id) running.insert(alloc.trial_id());
  return running;
}

Status Experiments::Kill(int64_t experiment_id) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (IsTerminal(exp->state)) return Status::Ok();
  if (Status s = Transition(*exp, RunState::kStoppingCanceled); !s.ok()) return s;
  for (const auto& id : allocations_.OfExperiment(experiment_id))
    if (LiveAllocation* alloc = allocations_.Find(id)) allocations_.Stop(*alloc, EndCause::kUserKill);
  // Trials with nothing running (paused, or waiting for the searcher) end now.
  if (Status s = trials_.TransitionIdle(experiment_id, RunState::kCanceled, LiveTrials(experiment_id));
      !s.ok())
    return s;
  FinishIfDone(experiment_id);
  return Status::Ok();
}

Status Experiments::Pause(int64_t experiment_id, SteadyTime now) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (Status s = Transition(*exp, RunState::kPaused); !s.ok()) return s;
  for (const auto& id : allocations_.OfExperiment(experiment_id)) {
    LiveAllocation* alloc = allocations_.Find(id);
    if (!alloc) continue;
    // Waiting ones just leave the queue; running ones checkpoint and exit.
    if (alloc->pending())
      allocations_.Stop(*alloc, EndCause::kPaused);
    else
      allocations_.RequestPreemption(*alloc, EndCause::kPaused, now, ranks_.PreemptionTimeout(experiment_id));
  }
  // Trials waiting for the searcher hold nothing; they are paused at once.
  return trials_.TransitionIdle(experiment_id, RunState::kPaused, LiveTrials(experiment_id));
}

Status Experiments::Activate(int64_t experiment_id) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (exp->state == RunState::kActive) return Status::Ok();
  if (Status s = Transition(*exp, RunState::kActive); !s.ok()) return s;
  const ExperimentConfig* config = settings_.Config(experiment_id);
  auto trials = trials_.OfExperiment(experiment_id);
  if (!trials.ok()) return trials.status();
  const bool searched = searches_.Find(experiment_id) != nullptr;
  for (auto& trial : *trials) {
    if (trial.state != RunState::kPaused) continue;
    const bool has_live = allocations_.TrialHasLive(trial.id);
    if (Status s = trials_.Transition(trial, RunState::kActive); !s.ok()) return s;
    if (!searched && !has_live && config)
      if (Status s = allocations_.Queue(trial, config->resources.resource_pool,
                                        static_cast<int>(config->resources.slots_per_trial));
          !s.ok())
        return s;
  }
  // Trials with an operation and nothing running go back in the queue.
  if (searched) searches_.Reconcile(experiment_id);
  return Status::Ok();
}

Status Experiments::ContinueTrial(int64_t trial_id, const std::string& config_yaml) {
  auto trial = trials_.Get(trial_id);
  if (!trial.ok()) return trial.status();
  auto exp = store_.GetExperiment(trial->experiment_id);
  if (!exp.ok()) return exp.status();
  const std::string name = "experiment " + std::to_string(exp->id);
  if (!IsTerminal(exp->state))
    return Conflict(name + " is " + std::string(ToString(exp->state)) +
                    ": a trial continues in place once its experiment has ended (or continue it as "
                    "a new experiment)");
  const ExperimentConfig* config = settings_.Config(exp->id);
  if (!config) return Internal(name + "'s stored config does not parse");
  if (config->searcher.name != "single")
    return Conflict(name + " searches with " + config->searcher.name +
                    ": only a single-trial experiment continues in place; continue the trial as a "
                    "new experiment");
  if (trial->latest_checkpoint.empty())
    return Conflict("trial " + std::to_string(trial_id) + " has no checkpoint to continue from");
  auto parsed = ParseExperimentConfig(config_yaml);
  if (!parsed.ok()) return parsed.status();
  // In this order, so that a crash between steps leaves an ended experiment
  // that a second continue finishes.
  if (Status s = store_.SetExperimentConfig(exp->id, config_yaml); !s.ok()) return s;
  settings_.Remember(exp->id, std::move(parsed).value());
  if (Status s = searches_.Restart(exp->id, trial_id); !s.ok()) return s;
  if (auto reread = trials_.Get(trial_id); reread.ok()) trial = std::move(reread);
  if (Status s = trials_.Reopen(*trial); !s.ok()) return s;
  const RunState from = exp->state;
  exp->state = RunState::kActive;  // the one edge out of an end: states.h
  exp->ended_at.clear();
  if (Status s = store_.UpdateExperiment(*exp); !s.ok()) return s;
  spdlog::info("[experiments] experiment {} {} -> ACTIVE (trial {} continued in place)", exp->id,
               ToString(from), trial_id);
  if (on_state_changed_) on_state_changed_(*exp, from);
  searches_.Reconcile(exp->id);
  return Status::Ok();
}

Status Experiments::SetArchived(int64_t experiment_id, bool archived) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok()) return exp.status();
  if (archived && !IsTerminal(exp->state))
    return Conflict("experiment " + std::to_string(experiment_id) + " is " +
                    std::string(ToString(exp->state)) + "; only ended experiments can be archived");
  exp->archived = archived;
  return store_.UpdateExperiment(*exp);
}

void Experiments::FinishIfDone(int64_t experiment_id) {
  auto exp = store_.GetExperiment(experiment_id);
  if (!exp.ok() || IsTerminal(exp->state)) return;
  auto trials = trials_.OfExperiment(experiment_id);
  if (!trials.ok()) return;
  // A search that may still create trials is not done.
  if (exp->state != RunState::kStoppingCanceled && !searches_.Finished(experiment_id)) return;
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
  if (Status s = Transition(*exp, final_state); !s.ok())
    spdlog::error("[experiments] experiment {}: {}", experiment_id, s.message());
}

}  // namespace ring
