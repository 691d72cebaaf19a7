#pragma once
// A running allocation asked to checkpoint and exit: by a pause (the trial
// then waits for activate), by the scheduler or an operator (it goes back
// to the queue), or by the searcher (trial-driven contract: it is done). The trial sees the request through
// its preemption long poll and acknowledges it; one still running at the deadline is killed.
#include <chrono>
#include <optional>

#include "common/end_cause.h"

namespace ring {

class Preemption {
 public:
  using Time = std::chrono::steady_clock::time_point;
  // Asks once; false when it was already asked (the first reason stays).
  bool Request(EndCause why, Time deadline) {
    if (cause_) return false;
    cause_ = why;
    deadline_ = deadline;
    return true;
  }
  void Acknowledge() { acknowledged_ = true; }
  bool requested() const { return cause_.has_value(); }
  bool acknowledged() const { return acknowledged_; }
  // kPaused, kPreempted or kSearcherStopped, once requested.
  std::optional<EndCause> cause() const { return cause_; }
  bool Overdue(Time now) const { return deadline_ && now >= *deadline_; }

 private:
  std::optional<EndCause> cause_;
  std::optional<Time> deadline_;
  bool acknowledged_ = false;
};

}  // namespace ring
