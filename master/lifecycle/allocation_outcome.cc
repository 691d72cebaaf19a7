#include "master/lifecycle/allocation_outcome.h"

#include <cstdio>
#include <cstdlib>

namespace ring {
namespace {

bool Canceled(const OutcomeFacts& f) {
  return f.experiment_state == RunState::kStoppingCanceled || f.cause == EndCause::kUserKill;
}

// A stop asked of the trial and acknowledged, then a clean exit: it stopped
// early on request, so its work is not finished.
bool StoppedOnRequest(const OutcomeFacts& f) {
  return f.exited_zero && f.preemption_acknowledged;
}

Outcome Requeue(std::string_view rule, bool counted) {
  return {.rule = rule, .trial_state = std::nullopt, .requeue = true, .restart_counted = counted};
}

Outcome Becomes(std::string_view rule, RunState state, SearchNotice notice) {
  return {.rule = rule, .trial_state = state, .notice = notice};
}

Outcome Keeps(std::string_view rule) {
  return {.rule = rule};
}

// F3..F7: the searcher says what the finished work amounts to.
Outcome ByVerdict(const OutcomeFacts& f) {
  if (!f.verdict) {
    std::fputs("DecideOutcome: the allocation finished its work but no searcher verdict was given\n", stderr);
    std::abort();
  }
  switch (*f.verdict) {
    case SearcherVerdict::kClosed:
      return Becomes("F3", RunState::kCompleted, SearchNotice::kClosed);
    case SearcherVerdict::kExitedEarly:
      return Becomes("F4", RunState::kCompleted, SearchNotice::kCanceled);
    case SearcherVerdict::kMoreWork:
      return f.experiment_state == RunState::kActive ? Requeue("F5", false) : Keeps("F6");
    case SearcherVerdict::kWaiting:
      return Keeps("F7");
  }
  std::abort();  // every verdict is handled above
}

}  // namespace

bool FinishedWork(const OutcomeFacts& f) {
  const bool clean_cause =
      f.cause == EndCause::kCompleted || f.cause == EndCause::kPaused || f.cause == EndCause::kExitedEarly;
  return clean_cause && f.exited_zero && !f.preemption_acknowledged && !Canceled(f);
}

Outcome DecideOutcome(const OutcomeFacts& f) {
  if (Canceled(f)) return Becomes("F1", RunState::kCanceled, SearchNotice::kCanceled);
  if (f.cause == EndCause::kInvalidHparams)
    return Becomes("F2", RunState::kError, SearchNotice::kInvalidHparams);
  if (f.cause == EndCause::kSearcherStopped)
    return Becomes("F14", RunState::kCompleted, SearchNotice::kClosed);
  if (FinishedWork(f)) return ByVerdict(f);
  if (f.experiment_state == RunState::kPaused || f.cause == EndCause::kPaused)
    return Becomes("F8", RunState::kPaused, SearchNotice::kNone);
  if (f.cause == EndCause::kAgentLost || f.cause == EndCause::kAgentRestarted) return Requeue("F9", false);
  if (StoppedOnRequest(f)) return Requeue("F10", false);
  if (f.cause == EndCause::kPreempted) return Requeue("F11", false);
  if (f.retries_canceled) return Becomes("F15", RunState::kError, SearchNotice::kErrored);
  if (f.restarts < f.max_restarts) return Requeue("F12", true);
  return Becomes("F13", RunState::kError, SearchNotice::kErrored);
}

}  // namespace ring
