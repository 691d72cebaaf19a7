#include "master/lifecycle/searches.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

namespace ring {
namespace {

constexpr double kProgressStep = 0.001;  // an experiment's progress is written in these steps

}  // namespace

Searches::Searches(Store& store, ExperimentSettings& settings, Trials& trials, Allocations& allocations)
    : store_(store), settings_(settings), trials_(trials), allocations_(allocations) {}

void Searches::Begin(int64_t experiment_id, search::Searcher searcher) {
  searches_.insert_or_assign(experiment_id, ExperimentSearch{std::move(searcher), {}, {}});
  Run(experiment_id, [](search::Searcher& s) { return s.Start(); });
}

Status Searches::Restart(int64_t experiment_id, int64_t trial_id) {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  auto trial = trials_.Get(trial_id);
  if (!config) return Internal("experiment " + std::to_string(experiment_id) + " has no config");
  if (!trial.ok()) return trial.status();
  auto searcher =
      search::Searcher::Create(config->searcher, config->hyperparameters, static_cast<uint64_t>(trial->seed));
  if (!searcher.ok()) return searcher.status();
  std::optional<search::RequestId> request;
  for (const auto& action : searcher->Start())
    if (const auto* create = std::get_if<search::CreateTrial>(&action)) {
      if (request) return Conflict("only a one-trial search continues in place");
      request = create->request_id;
      searcher->TrialCreated(create->request_id);  // adopted: the trial exists
    }
  if (!request) return Conflict("the searcher made no trial to continue");
  SearcherStep step;
  step.experiment_id = experiment_id;
  step.snapshot_json = searcher->Snapshot().dump();
  if (auto committed = store_.CommitSearcherStep(step); !committed.ok()) return committed.status();
  if (trial->request_id != *request) {
    trial->request_id = *request;
    if (Status s = trials_.Save(*trial); !s.ok()) return s;
  }
  searches_.insert_or_assign(
      experiment_id,
      ExperimentSearch{std::move(searcher).value(), {{*request, trial_id}}, {{trial_id, *request}}});
  Publish(experiment_id);
  return Status::Ok();
}

ExperimentSearch* Searches::Find(int64_t experiment_id) {
  if (auto it = searches_.find(experiment_id); it != searches_.end()) return &it->second;
  const ExperimentConfig* config = settings_.Config(experiment_id);
  auto trials = trials_.OfExperiment(experiment_id);
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
      Run(experiment_id, [](search::Searcher& s) { return s.Start(); });
    Publish(experiment_id);
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
  auto* loaded = &searches_.emplace(experiment_id, std::move(search)).first->second;
  Publish(experiment_id);
  return loaded;
}

bool Searches::Finished(int64_t experiment_id) {
  auto it = searches_.find(experiment_id);
  return it == searches_.end() || it->second.searcher.IsShutdown();
}

void Searches::Run(int64_t experiment_id, Event event) {
  std::deque<Event> queue;
  queue.push_back(std::move(event));
  while (!queue.empty()) {
    auto it = searches_.find(experiment_id);
    auto exp = store_.GetExperiment(experiment_id);
    if (it == searches_.end() || !exp.ok()) {
      Publish(experiment_id);
      return;
    }
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
      step.new_trials.push_back(
          Trials::New(experiment_id, create->request_id, create->hparams.dump(), create->seed,
                      exp->state == RunState::kPaused ? RunState::kPaused : RunState::kActive,
                      exp->warm_start_checkpoint));
      auto more = search.searcher.TrialCreated(create->request_id);
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
      Publish(experiment_id);
      return;
    }
    for (size_t i = 0; i < ids->size(); ++i) {
      const auto request = *step.new_trials[i].request_id;
      search.trial_of[request] = (*ids)[i];
      search.request_of[(*ids)[i]] = request;
    }
    for (const auto& action : actions) Apply(experiment_id, action, queue);
  }
  Publish(experiment_id);
  // Ending an allocation tells the searcher again (a nested Run): only now.
  for (auto pending = std::exchange(stop_after_run_, {}); const auto& id : pending)
    if (LiveAllocation* alloc = allocations_.Find(id); alloc && alloc->pending())
      allocations_.Stop(*alloc, EndCause::kSearcherStopped);
  UpdateProgress(experiment_id);
  if (on_settled_) on_settled_(experiment_id);
}

void Searches::Publish(int64_t experiment_id) {
  auto it = searches_.find(experiment_id);
  if (it == searches_.end()) {
    operations_view_.Forget(experiment_id);
    return;
  }
  TrialOperationsView::Operations operations;
  for (const auto& [trial_id, request] : it->second.request_of)
    operations[trial_id] = it->second.searcher.Operation(request);
  operations_view_.Publish(experiment_id, std::move(operations));
}

void Searches::Apply(int64_t experiment_id, const search::Action& action, std::deque<Event>& follow_ups) {
  ExperimentSearch& search = searches_.at(experiment_id);
  spdlog::info("[searcher] experiment {}: {}", experiment_id, search::ToString(action));
  auto trial_for = [&](search::RequestId request) -> std::optional<TrialRecord> {
    auto id = search.trial_of.find(request);
    if (id == search.trial_of.end()) return std::nullopt;
    auto trial = trials_.Get(id->second);
    if (!trial.ok() || IsTerminal(trial->state)) return std::nullopt;
    return *trial;
  };
  const bool trial_driven = search.searcher.contract() == search::SearcherContract::kTrialDriven;
  if (const auto* train = std::get_if<search::TrainTo>(&action)) {
    // A running trial asks for its operation itself; a waiting one restarts
    // from its latest checkpoint.
    if (auto trial = trial_for(train->request_id)) QueueTrial(experiment_id, *trial);
  } else if (const auto* create = std::get_if<search::CreateTrial>(&action)) {
    // Trial-driven trials get no operation: each new trial starts at once.
    if (!trial_driven) return;
    if (auto trial = trial_for(create->request_id)) QueueTrial(experiment_id, *trial);
  } else if (const auto* close = std::get_if<search::CloseTrial>(&action)) {
    auto trial = trial_for(close->request_id);
    if (trial && trial_driven && allocations_.TrialHasLive(trial->id)) {
      StopForSearcher(trial->id);  // it ends SEARCHER_STOPPED (F14)
      return;
    }
    if (!trial || allocations_.TrialHasLive(trial->id))
      return;  // it ends when it asks for its next operation
    if (Status s = trials_.Transition(*trial, RunState::kCompleted); !s.ok()) {
      spdlog::error("[searcher] trial {}: {}", trial->id, s.message());
      return;
    }
    const auto request = close->request_id;
    follow_ups.push_back([request](search::Searcher& s) { return s.TrialClosed(request); });
  }
}

void Searches::QueueTrial(int64_t experiment_id, const TrialRecord& trial_in) {
  auto exp = store_.GetExperiment(experiment_id);
  const ExperimentConfig* config = settings_.Config(experiment_id);
  if (allocations_.TrialHasLive(trial_in.id) || !exp.ok() || exp->state != RunState::kActive || !config)
    return;
  TrialRecord trial = trial_in;
  if (Status s = trials_.Transition(trial, RunState::kActive); !s.ok()) {
    spdlog::error("[searcher] trial {}: {}", trial.id, s.message());
    return;
  }
  if (Status s = allocations_.Queue(trial, config->resources.resource_pool,
                                    static_cast<int>(config->resources.slots_per_trial));
      !s.ok())
    spdlog::error("[searcher] trial {}: cannot queue: {}", trial.id, s.message());
}

void Searches::StopForSearcher(int64_t trial_id) {
  for (auto& [id, alloc] : allocations_.live()) {
    if (alloc.record.trial_id != trial_id) continue;
    if (alloc.pending()) {
      stop_after_run_.push_back(id);
      continue;
    }
    const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
    allocations_.RequestPreemption(alloc, EndCause::kSearcherStopped, std::chrono::steady_clock::now(),
                                   std::chrono::seconds(config ? config->preemption_timeout_s : 3600));
  }
}

void Searches::Reported(int64_t experiment_id, int64_t trial_id, double time, double metric) {
  ExperimentSearch* search = Find(experiment_id);
  if (!search || search->searcher.contract() != search::SearcherContract::kTrialDriven) return;
  auto it = search->request_of.find(trial_id);
  if (it == search->request_of.end()) return;
  const auto id = it->second;
  Run(experiment_id, [id, time, metric](search::Searcher& s) { return s.MetricsReported(id, time, metric); });
}

void Searches::Reconcile(int64_t experiment_id) {
  ExperimentSearch* search = Find(experiment_id);
  auto exp = store_.GetExperiment(experiment_id);
  auto trials = trials_.OfExperiment(experiment_id);
  if (!search || !exp.ok() || !trials.ok()) return;
  for (auto& t : *trials) {
    if (!t.request_id) continue;
    const auto request = *t.request_id;
    if (IsTerminal(t.state)) {
      // Events the searcher may have missed in a crash; repeats are ignored.
      if (t.state == RunState::kCompleted) {
        Run(experiment_id, [request](search::Searcher& s) { return s.TrialClosed(request); });
        continue;
      }
      auto reason = search::ExitReason::kCanceled;
      if (t.state == RunState::kError) {
        reason = search::ExitReason::kErrored;
        if (auto allocs = store_.ListAllocations(t.id);
            allocs.ok() && !allocs->empty() && allocs->back().end_cause == EndCause::kInvalidHparams)
          reason = search::ExitReason::kInvalidHparams;
      }
      Run(experiment_id,
          [request, reason](search::Searcher& s) { return s.TrialExitedEarly(request, reason); });
      continue;
    }
    if (allocations_.TrialHasLive(t.id)) continue;
    search = Find(experiment_id);
    if (!search) return;
    std::deque<Event> follow_ups;
    if (auto length = search->searcher.Operation(request))
      Apply(experiment_id, search::TrainTo{request, *length}, follow_ups);
    else if (search->searcher.Closed(request))
      Apply(experiment_id, search::CloseTrial{request}, follow_ups);
    else if (search->searcher.contract() == search::SearcherContract::kTrialDriven)
      QueueTrial(experiment_id, t);  // trial-driven: runs until it exits or is stopped
    for (auto& e : follow_ups) Run(experiment_id, std::move(e));
  }
  if (on_settled_) on_settled_(experiment_id);
}

void Searches::UpdateProgress(int64_t experiment_id) {
  auto it = searches_.find(experiment_id);
  auto exp = store_.GetExperiment(experiment_id);
  auto trials = trials_.OfExperiment(experiment_id);
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

Result<OperationAnswer> Searches::Operation(LiveAllocation& alloc, std::optional<int64_t> after) {
  ExperimentSearch* search = Find(alloc.experiment_id);
  std::optional<search::RequestId> request;
  if (search)
    if (auto it = search->request_of.find(alloc.trial_id()); it != search->request_of.end())
      request = it->second;
  if (!request) {
    // A trial from before searchers were recorded: one operation to max_length.
    const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
    const int64_t length = config ? config->searcher.max_length_batches : 0;
    if (after && *after >= length) return OperationAnswer{std::nullopt, true};
    return OperationAnswer{length, false};
  }
  const auto length = search->searcher.Operation(*request);
  if (length && (!after || *length > *after)) return OperationAnswer{length, false};
  if (length) return OperationAnswer{std::nullopt, false};  // its completion has not arrived yet
  alloc.told_done = true;
  return OperationAnswer{std::nullopt, true};
}

bool Searches::Complete(const LiveAllocation& alloc, const OperationCompletion& done) {
  ExperimentSearch* search = Find(alloc.experiment_id);
  if (!search) return false;
  auto request = search->request_of.find(alloc.trial_id());
  if (request == search->request_of.end() || search->searcher.Operation(request->second) != done.length)
    return false;
  const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
  spdlog::info("[searcher] trial {} completed its operation to {} batches: {} {}", alloc.trial_id(),
               done.length, config ? config->searcher.metric : "metric", done.metric);
  const auto id = request->second;
  Run(alloc.experiment_id,
      [id, done](search::Searcher& s) { return s.ValidationCompleted(id, done.metric, done.length); });
  return true;
}

std::optional<int64_t> Searches::TrialOperation(int64_t experiment_id, int64_t trial_id) {
  ExperimentSearch* search = Find(experiment_id);
  if (!search) return std::nullopt;
  auto request = search->request_of.find(trial_id);
  if (request == search->request_of.end()) return std::nullopt;
  return search->searcher.Operation(request->second);
}

std::optional<double> Searches::StoredMetric(int64_t trial_id, int64_t length,
                                             const ExperimentConfig& config) {
  auto metrics = store_.GetMetrics(trial_id, MetricKind::kValidation);
  if (!metrics.ok()) return std::nullopt;
  for (const auto& m : *metrics) {
    if (m.batches != length) continue;
    auto values = nlohmann::json::parse(m.metrics_json, nullptr, false);
    if (!values.is_object()) continue;
    auto v = values.find(config.searcher.metric);
    if (v != values.end() && v->is_number() && std::isfinite(v->get<double>())) return v->get<double>();
  }
  return std::nullopt;
}

SearcherVerdict Searches::Verdict(const TrialRecord& trial, const LiveAllocation& alloc) {
  const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
  ExperimentSearch* search = Find(alloc.experiment_id);
  if (!search || !config) return SearcherVerdict::kClosed;
  auto request = search->request_of.find(trial.id);
  if (request == search->request_of.end()) return SearcherVerdict::kClosed;
  const auto id = request->second;
  // Trial-driven: exiting 0 on its own is how a trial says its work is done.
  if (search->searcher.contract() == search::SearcherContract::kTrialDriven) return SearcherVerdict::kClosed;
  auto length = search->searcher.Operation(id);
  if (length && !alloc.told_done) {
    // It never asked for operations (a plain training loop): its validation
    // at the operation's length completes the operation.
    auto metric = StoredMetric(trial.id, *length, *config);
    if (!metric) return SearcherVerdict::kExitedEarly;
    const auto at = *length;
    Run(alloc.experiment_id,
        [id, m = *metric, at](search::Searcher& s) { return s.ValidationCompleted(id, m, at); });
    search = Find(alloc.experiment_id);
    if (!search) return SearcherVerdict::kWaiting;
    length = search->searcher.Operation(id);
  }
  if (length) return SearcherVerdict::kMoreWork;  // promoted after it was told it had nothing to do
  if (search->searcher.Closed(id)) return SearcherVerdict::kClosed;
  return SearcherVerdict::kWaiting;
}

void Searches::Notify(int64_t experiment_id, int64_t trial_id, SearchNotice notice) {
  if (notice == SearchNotice::kNone) return;
  ExperimentSearch* search = Find(experiment_id);
  if (!search) return;
  auto it = search->request_of.find(trial_id);
  if (it == search->request_of.end()) return;
  const auto id = it->second;
  switch (notice) {
    case SearchNotice::kNone:
      return;
    case SearchNotice::kClosed:
      Run(experiment_id, [id](search::Searcher& s) { return s.TrialClosed(id); });
      return;
    case SearchNotice::kCanceled:
      Run(experiment_id,
          [id](search::Searcher& s) { return s.TrialExitedEarly(id, search::ExitReason::kCanceled); });
      return;
    case SearchNotice::kErrored:
      Run(experiment_id,
          [id](search::Searcher& s) { return s.TrialExitedEarly(id, search::ExitReason::kErrored); });
      return;
    case SearchNotice::kInvalidHparams:
      Run(experiment_id,
          [id](search::Searcher& s) { return s.TrialExitedEarly(id, search::ExitReason::kInvalidHparams); });
      return;
  }
}

}  // namespace ring
