#pragma once
// What happens to a trial when one of its allocations ends: a pure function
// of typed facts, one numbered rule of docs/failure-model.md per branch
// (tests/lifecycle/outcomes/<rule>.yaml shows each). No store, no clock.
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/end_cause.h"
#include "common/states.h"

namespace ring {

// What the searcher says of a trial whose allocation finished its work
// (exited 0 unasked): asked only when FinishedWork(facts) is true.
enum class SearcherVerdict {
  kClosed,       // closed by the searcher, or the trial is not searched
  kWaiting,      // no operation now: waits, holding no slots, for a promotion or a close
  kMoreWork,     // has an operation again: runs on from its latest checkpoint
  kExitedEarly,  // exited without completing its operation
};

struct OutcomeFacts {
  RunState experiment_state = RunState::kActive;
  EndCause cause = EndCause::kCompleted;  // as stored on the allocation
  bool exited_zero = false;               // every rank exited with code 0
  bool preemption_acknowledged = false;   // the trial said it would checkpoint and exit
  std::optional<SearcherVerdict> verdict;
  int64_t restarts = 0;           // counted failures so far
  int64_t max_restarts = 5;       // the experiment's max_restarts
  bool retries_canceled = false;  // a cancel_retries log policy matched a line of the trial
};

// What the searcher is told about the trial, if anything.
enum class SearchNotice { kNone, kClosed, kCanceled, kErrored, kInvalidHparams };

struct Outcome {
  std::string_view rule;                // "F1" ... as numbered in docs/failure-model.md
  std::optional<RunState> trial_state;  // the trial's next state; nullopt keeps it
  bool requeue = false;                 // queue a new allocation from the latest checkpoint
  bool restart_counted = false;         // restarts + 1 (only with requeue)
  SearchNotice notice = SearchNotice::kNone;
};

// True when the allocation finished the trial's work on its own, so the
// searcher's verdict decides (facts.verdict must then be set): every rank
// exited 0 without having acknowledged a stop, the cause is kCompleted,
// kPaused or kExitedEarly, and the experiment is not being canceled (F1 wins
// without asking the searcher). Asking the searcher has effects (a plain
// training loop's last validation completes its operation), so the caller
// asks exactly when this is true; DecideOutcome reads no verdict otherwise.
bool FinishedWork(const OutcomeFacts& facts);

// The first rule of docs/failure-model.md that applies. Aborts when
// FinishedWork(facts) and facts.verdict is not set (a caller's bug).
Outcome DecideOutcome(const OutcomeFacts& facts);

}  // namespace ring
