// ExperimentController: the experiment's searcher. Each event (start, an
// operation completed, a trial ended) runs the searcher; the trials its
// decisions create are written with its new snapshot in one transaction, and
// only then acted on: queue allocations for operations, complete closed
// trials that are not running. Everything here runs with mu_ held.
#include <cmath>
#include <random>

#include <spdlog/spdlog.h>

#include "master/core/experiment_controller.h"

namespace ring {
namespace {

constexpr double kProgressStep = 0.001;  // an experiment's progress is written in these steps

}  // namespace

ExperimentSearch* ExperimentController::SearchLocked(int64_t experiment_id) {
  if (auto it = searches_.find(experiment_id); it != searches_.end()) return &it->second;
  const ExperimentConfig* config = ConfigLocked(experiment_id);
  auto trials = store_.ListTrials(experiment_id);
  if (!config || !trials.ok()) return nullptr;
  auto snapshot = store_.GetSearcherSnapshot(experiment_id);
  if (!snapshot.ok() && snapshot.status().code() != ErrorCode::kNotFound) return nullptr;
  if (!snapshot.ok()) {
    // Trials without a snapshot were made before searchers were recorded.
    if (!trials->empty()) return nullptr;
    const uint64_t seed = config->experiment_seed
                              ? static_cast<uint64_t>(*config->experiment_seed)
                              : (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
    auto searcher = search::Searcher::Create(config->searcher, config->hyperparameters, seed);
    if (!searcher.ok()) {
      spdlog::error("[searcher] experiment {}: {}", experiment_id, searcher.status().message());
      return nullptr;
    }
    searches_.emplace(experiment_id, ExperimentSearch{std::move(searcher).value(), {}, {}});
    auto exp = store_.GetExperiment(experiment_id);
    if (exp.ok() && !IsTerminal(exp->state))
      SearchEventLocked(experiment_id, [](search::Searcher& s) { return s.Start(); });
    auto it = searches_.find(experiment_id);
    return it == searches_.end() ? nullptr : &it->second;
  }
  auto json = nlohmann::json::parse(*snapshot, nullptr, false);
  auto searcher = search::Searcher::Restore(config->searcher, config->hyperparameters, json);
  if (!searcher.ok()) {
    spdlog::error("[searcher] experiment {}: stored snapshot cannot be restored: {}", experiment_id,
                  searcher.status().message());
    return nullptr;
  }
  ExperimentSearch search{std::move(searcher).value(), {}, {}};
  for (const auto& t : *trials) {
    if (!t.request_id) continue;
    search.trial_of[*t.request_id] = t.id;
    search.request_of[t.id] = *t.request_id;
  }
  return &searches_.emplace(experiment_id, std::move(search)).first->second;
}

void ExperimentController::SearchEventLocked(int64_t experiment_id, SearchEvent event) {
  std::deque<SearchEvent> queue;
  queue.push_back(std::move(event));
  while (!queue.empty()) {
    auto it = searches_.find(experiment_id);
    auto exp = store_.GetExperiment(experiment_id);
    if (it == searches_.end() || !exp.ok()) return;
    ExperimentSearch& search = it->second;
    const std::string before = search.searcher.Snapshot().dump();
    std::vector<search::Action> actions = queue.front()(search.searcher);
    queue.pop_front();

    // A created trial is announced to the searcher in the same step, so its
    // row and the searcher's knowledge of it are committed together.
    SearcherStep step;
    step.experiment_id = experiment_id;
    for (size_t i = 0; i < actions.size(); ++i) {
      const auto* create = std::get_if<search::CreateTrial>(&actions[i]);
      if (!create) continue;
      TrialRecord t;
      t.experiment_id = experiment_id;
      t.request_id = create->request_id;
      t.hparams_json = create->hparams.dump();
      t.seed = create->seed;
      t.state = exp->state == RunState::kPaused ? RunState::kPaused : RunState::kActive;
      step.new_trials.push_back(t);
      auto more = search.searcher.TrialCreated(*t.request_id);
      actions.insert(actions.end(), more.begin(), more.end());
    }
    step.snapshot_json = search.searcher.Snapshot().dump();
    if (actions.empty() && step.snapshot_json == before) continue;
    auto ids = store_.CommitSearcherStep(step);
    if (!ids.ok()) {
      // Memory went ahead of the database: forget it; the next use restores
      // the last committed snapshot.
      spdlog::error("[searcher] experiment {}: cannot record a decision: {}", experiment_id,
                    ids.status().message());
      searches_.erase(experiment_id);
      return;
    }
    for (size_t i = 0; i < ids->size(); ++i) {
      const auto request = *step.new_trials[i].request_id;
      search.trial_of[request] = (*ids)[i];
      search.request_of[(*ids)[i]] = request;
    }
    for (const auto& action : actions) ApplySearchActionLocked(experiment_id, action, queue);
  }
  UpdateProgressLocked(experiment_id);
  FinishExperimentIfDoneLocked(experiment_id);
}

void ExperimentController::ApplySearchActionLocked(int64_t experiment_id, const search::Action& action,
                                                   std::deque<SearchEvent>& follow_ups) {
  ExperimentSearch& search = searches_.at(experiment_id);
  spdlog::info("[searcher] experiment {}: {}", experiment_id, search::ToString(action));
  auto trial_for = [&](search::RequestId request) -> std::optional<TrialRecord> {
    auto id = search.trial_of.find(request);
    if (id == search.trial_of.end()) return std::nullopt;
    auto trial = store_.GetTrial(id->second);
    if (!trial.ok() || IsTerminal(trial->state)) return std::nullopt;
    return *trial;
  };
  auto running = [&](int64_t trial_id) {
    for (const auto& [id, alloc] : live_)
      if (alloc.record.trial_id == trial_id) return true;
    return false;
  };
  if (const auto* train = std::get_if<search::TrainTo>(&action)) {
    auto trial = trial_for(train->request_id);
    auto exp = store_.GetExperiment(experiment_id);
    // A running trial asks for its operation itself; a waiting one restarts
    // from its latest checkpoint.
    if (!trial || running(trial->id) || !exp.ok() || exp->state != RunState::kActive) return;
    const ExperimentConfig* config = ConfigLocked(experiment_id);
    if (!config) return;
    if (trial->state != RunState::kActive) {
      trial->state = RunState::kActive;
      if (Status s = store_.UpdateTrial(*trial); !s.ok()) return;
    }
    if (Status s = QueueAllocationLocked(*trial, config->resources.resource_pool,
                                         static_cast<int>(config->resources.slots_per_trial));
        !s.ok())
      spdlog::error("[searcher] trial {}: cannot queue: {}", trial->id, s.message());
  } else if (const auto* close = std::get_if<search::CloseTrial>(&action)) {
    auto trial = trial_for(close->request_id);
    if (!trial || running(trial->id)) return;  // it ends when it asks for its next operation
    trial->state = RunState::kCompleted;
    trial->ended_at = NowRfc3339();
    if (Status s = store_.UpdateTrial(*trial); !s.ok()) {
      spdlog::error("[searcher] trial {}: {}", trial->id, s.message());
      return;
    }
    const auto request = close->request_id;
    follow_ups.push_back([request](search::Searcher& s) { return s.TrialClosed(request); });
  }
}

void ExperimentController::ReconcileSearchLocked(int64_t experiment_id) {
  ExperimentSearch* search = SearchLocked(experiment_id);
  auto exp = store_.GetExperiment(experiment_id);
  auto trials = store_.ListTrials(experiment_id);
  if (!search || !exp.ok() || !trials.ok()) return;
  std::set<int64_t> running;
  for (const auto& [id, alloc] : live_) running.insert(alloc.record.trial_id);
  for (auto& t : *trials) {
    if (!t.request_id) continue;
    const auto request = *t.request_id;
    if (IsTerminal(t.state)) {
      // Events the searcher may have missed in a crash; repeats are ignored.
      if (t.state == RunState::kCompleted) {
        SearchEventLocked(experiment_id, [request](search::Searcher& s) { return s.TrialClosed(request); });
        continue;
      }
      auto reason = search::ExitReason::kCanceled;
      if (t.state == RunState::kError) {
        reason = search::ExitReason::kErrored;
        if (auto allocs = store_.ListAllocations(t.id);
            allocs.ok() && !allocs->empty() && allocs->back().exit_reason.starts_with("invalid hyper"))
          reason = search::ExitReason::kInvalidHparams;
      }
      SearchEventLocked(experiment_id, [request, reason](search::Searcher& s) {
        return s.TrialExitedEarly(request, reason);
      });
      continue;
    }
    if (running.count(t.id)) continue;
    search = SearchLocked(experiment_id);
    if (!search) return;
    std::deque<SearchEvent> follow_ups;
    if (auto length = search->searcher.Operation(request))
      ApplySearchActionLocked(experiment_id, search::TrainTo{request, *length}, follow_ups);
    else if (search->searcher.Closed(request))
      ApplySearchActionLocked(experiment_id, search::CloseTrial{request}, follow_ups);
    for (auto& e : follow_ups) SearchEventLocked(experiment_id, std::move(e));
  }
  FinishExperimentIfDoneLocked(experiment_id);
}

void ExperimentController::UpdateProgressLocked(int64_t experiment_id) {
  auto it = searches_.find(experiment_id);
  auto exp = store_.GetExperiment(experiment_id);
  auto trials = store_.ListTrials(experiment_id);
  if (it == searches_.end() || !exp.ok() || !trials.ok() || IsTerminal(exp->state)) return;
  std::map<search::RequestId, int64_t> trained;
  for (const auto& t : *trials)
    if (t.request_id) trained[*t.request_id] = t.total_batches;
  const double progress = std::clamp(it->second.searcher.Progress(trained), 0.0, 1.0);
  // Written in steps of 0.1% (and at 0 and 1): each report batch nudges it,
  // and each write is a commit.
  if (std::abs(progress - exp->progress) < kProgressStep && progress != 0.0 && progress != 1.0) return;
  if (progress == exp->progress) return;
  exp->progress = progress;
  if (Status s = store_.UpdateExperiment(*exp); !s.ok())
    spdlog::warn("[searcher] experiment {}: cannot record progress: {}", experiment_id, s.message());
}

}  // namespace ring
