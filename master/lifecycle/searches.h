#pragma once
// Search coordination: each experiment's searcher, which trial each of its
// requests became, and the trials' searcher operations. Each event (start,
// an operation completed, a validation reported, a trial ended) runs the
// searcher; the trials its decisions create are written with its new
// snapshot in one transaction, and only then acted on: allocations queued
// for operations (or, under the trial-driven contract, for every new
// trial), closed trials that are not running completed, and, under the
// trial-driven contract, closed trials that are running asked to stop
// (EndCause::kSearcherStopped). Used on the lifecycle's executor only.
#include <deque>
#include <functional>
#include <map>
#include <optional>

#include "common/searcher/searcher.h"
#include "master/lifecycle/allocation_outcome.h"
#include "master/lifecycle/allocations.h"
#include "master/lifecycle/commands.h"
#include "master/lifecycle/experiment_settings.h"
#include "master/lifecycle/trial_operations_view.h"
#include "master/lifecycle/trials.h"

namespace ring {

// An experiment's searcher and which trial each of its requests became.
struct ExperimentSearch {
  search::Searcher searcher;
  std::map<search::RequestId, int64_t> trial_of;
  std::map<int64_t, search::RequestId> request_of;
};

class Searches {
 public:
  using Event = std::function<std::vector<search::Action>(search::Searcher&)>;
  // After an event: the experiment may now be done.
  using SettledHandler = std::function<void(int64_t experiment_id)>;
  Searches(Store& store, ExperimentSettings& settings, Trials& trials, Allocations& allocations);
  void OnSettled(SettledHandler handler) { on_settled_ = std::move(handler); }

  // A new experiment's searcher: its first decisions and the trials they
  // create are one step.
  void Begin(int64_t experiment_id, search::Searcher searcher);
  // The experiment's searcher, restored from its snapshot when needed;
  // null when it has none (or it cannot be restored).
  ExperimentSearch* Find(int64_t experiment_id);
  // Continuing in place: a fresh searcher from the experiment's (rewritten)
  // config whose one trial is `trial_id`, already made, rather than a new
  // one; its first operation is committed with its snapshot. Only for the
  // `single` searcher, whose first request is that trial.
  Status Restart(int64_t experiment_id, int64_t trial_id);
  // Catches up with what the trials did meanwhile (after a restart or an
  // activate): ended trials are told, trials with an operation and nothing
  // running are queued, closed ones completed.
  void Reconcile(int64_t experiment_id);
  // The experiment's progress from its trials' batches, written in steps.
  void UpdateProgress(int64_t experiment_id);
  // True when the searcher will create no more trials.
  bool Finished(int64_t experiment_id);

  // The trial API's operations.
  Result<OperationAnswer> Operation(LiveAllocation& alloc, std::optional<int64_t> after);
  bool Complete(const LiveAllocation& alloc, const OperationCompletion& done);
  std::optional<int64_t> TrialOperation(int64_t experiment_id, int64_t trial_id);
  // The same, published for other threads (safe to read from any thread).
  const TrialOperationsView& operations_view() const { return operations_view_; }
  // What the searcher says of a trial whose allocation finished on its own.
  SearcherVerdict Verdict(const TrialRecord& trial, const LiveAllocation& alloc);
  // Tells the searcher a trial ended (closed, or exited early).
  void Notify(int64_t experiment_id, int64_t trial_id, SearchNotice notice);
  // Trial-driven contract: the trial reported a validation whose metrics
  // hold the time metric (`time`) and the searcher metric. Ignored under the
  // operations contract.
  void Reported(int64_t experiment_id, int64_t trial_id, double time, double metric);

 private:
  void Run(int64_t experiment_id, Event event);
  // Publishes the experiment's trials' operations (or forgets them when
  // its searcher is not loaded).
  void Publish(int64_t experiment_id);
  void Apply(int64_t experiment_id, const search::Action& action, std::deque<Event>& follow_ups);
  // Queues a trial that has nothing running (active experiments only).
  void QueueTrial(int64_t experiment_id, const TrialRecord& trial);
  // Trial-driven: asks the trial's running allocation to stop, or stops its
  // queued one (after the current Run, which it may re-enter).
  void StopForSearcher(int64_t trial_id);
  std::optional<double> StoredMetric(int64_t trial_id, int64_t length, const ExperimentConfig& config);

  Store& store_;
  ExperimentSettings& settings_;
  Trials& trials_;
  Allocations& allocations_;
  SettledHandler on_settled_;
  std::map<int64_t, ExperimentSearch> searches_;  // by experiment id
  std::vector<std::string> stop_after_run_;       // queued allocations the searcher stopped
  TrialOperationsView operations_view_;           // what searches_ says, for other threads
};

}  // namespace ring
