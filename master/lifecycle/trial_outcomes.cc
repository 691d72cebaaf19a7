#include "master/lifecycle/trial_outcomes.h"

#include <spdlog/spdlog.h>

#include "master/lifecycle/experiments.h"

namespace ring {

TrialOutcomes::TrialOutcomes(Store& store, ExperimentSettings& settings, Trials& trials,
                             Allocations& allocations, Searches& searches, Checkpoints& checkpoints,
                             Experiments& experiments, LogPolicies& log_policies,
                             std::function<void()> on_restart)
    : store_(store),
      settings_(settings),
      trials_(trials),
      allocations_(allocations),
      searches_(searches),
      checkpoints_(checkpoints),
      experiments_(experiments),
      log_policies_(log_policies),
      on_restart_(std::move(on_restart)) {}

void TrialOutcomes::OnAllocationEnded(const LiveAllocation& alloc) {
  auto trial = trials_.Get(alloc.trial_id());
  auto exp = store_.GetExperiment(alloc.experiment_id);
  const ExperimentConfig* config = settings_.Config(alloc.experiment_id);
  if (!trial.ok() || !exp.ok() || !config || IsTerminal(trial->state)) return;

  OutcomeFacts facts;
  facts.experiment_state = exp->state;
  facts.cause = alloc.record.end_cause.value_or(EndCause::kFailed);
  facts.exited_zero = alloc.record.exit_code == 0 && !alloc.failure_code;
  facts.preemption_acknowledged = alloc.preemption.acknowledged();
  facts.restarts = trial->restarts;
  facts.max_restarts = config->max_restarts;
  facts.retries_canceled = log_policies_.RetriesCanceled(alloc.experiment_id, trial->id);
  if (FinishedWork(facts)) {
    facts.verdict = searches_.Verdict(*trial, alloc);
    if (auto fresh = trials_.Get(trial->id); fresh.ok()) trial = fresh;  // the searcher may have moved it
    if (IsTerminal(trial->state)) return;
  }
  const Outcome outcome = DecideOutcome(facts);
  if (outcome.notice == SearchNotice::kCanceled && facts.verdict == SearcherVerdict::kExitedEarly)
    spdlog::warn("[trials] trial {} exited 0 without completing its searcher operation", trial->id);

  if (outcome.restart_counted) {
    ++trial->restarts;
    if (on_restart_) on_restart_();
  }
  const RunState next = outcome.trial_state.value_or(trial->state);
  Status written = next == trial->state ? trials_.Save(*trial) : trials_.Transition(*trial, next);
  if (!written.ok()) {
    spdlog::error("[trials] trial {}: {} (rule {})", trial->id, written.message(), outcome.rule);
    return;
  }
  spdlog::info("[trials] trial {}: allocation {} ended {}: rule {} -> {}{}", trial->id, alloc.record.id,
               ToString(facts.cause), outcome.rule, ToString(next),
               outcome.requeue
                   ? (outcome.restart_counted ? " (restart " + std::to_string(trial->restarts) + " of " +
                                                    std::to_string(config->max_restarts) + ")"
                                              : " (requeued)")
                   : "");
  if (outcome.requeue)
    if (Status s = allocations_.Queue(*trial, alloc.pool, alloc.world_size); !s.ok())
      spdlog::error("[trials] trial {}: cannot queue a restart: {}", trial->id, s.message());
  if (IsTerminal(next)) {
    checkpoints_.Collect(alloc.experiment_id);
    log_policies_.Forget(trial->id);
  }
  searches_.Notify(alloc.experiment_id, trial->id, outcome.notice);
  experiments_.FinishIfDone(alloc.experiment_id);
}

Status TrialOutcomes::Kill(int64_t trial_id) {
  auto trial = trials_.Get(trial_id);
  if (!trial.ok()) return trial.status();
  if (IsTerminal(trial->state)) return Status::Ok();
  auto exp = store_.GetExperiment(trial->experiment_id);
  if (!exp.ok()) return exp.status();
  if (IsTerminal(exp->state) || exp->state == RunState::kStoppingCanceled) return Status::Ok();
  for (auto& [id, alloc] : allocations_.live())
    if (alloc.is_trial() && alloc.trial_id() == trial_id) {
      // A kill wins over a stop already asked for (a preemption, a pause):
      // the trial is not to be queued again.
      alloc.stop_cause = EndCause::kUserKill;
      allocations_.Stop(alloc, EndCause::kUserKill);
      spdlog::info("[trials] trial {}: killed by its owner or an admin", trial_id);
      return Status::Ok();  // its end (OnAllocationEnded) cancels it
    }
  if (Status s = trials_.Transition(*trial, RunState::kCanceled); !s.ok()) return s;
  spdlog::info("[trials] trial {}: killed by its owner or an admin with nothing running", trial_id);
  checkpoints_.Collect(trial->experiment_id);
  log_policies_.Forget(trial_id);
  searches_.Notify(trial->experiment_id, trial_id, SearchNotice::kCanceled);
  experiments_.FinishIfDone(trial->experiment_id);
  return Status::Ok();
}

}  // namespace ring
