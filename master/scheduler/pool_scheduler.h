#pragma once
// One pool's scheduler kept between passes. SchedulePool (scheduler.h) is a
// pure function of one pass's input; this object decides exactly what it
// would on the same input, but keeps from the last pass what most passes do
// not change, and re-decides only what a change can affect:
//
//  - the input and the decision of the last pass: a pass whose input is the
//    same (a pool marked dirty by something that changed nothing the
//    scheduler reads) returns the kept decision;
//  - the pending queue in scheduling order (priority policy) and by
//    allocation id, and the running allocations in the order they are
//    preempted, carried over by matching them by id, so a pass sorts only
//    what arrived or changed;
//  - per pending request, what it did in the last pass (priority policy,
//    scheduling_priority.h's RequestTrace). While the agents and the running
//    allocations stay as they were, a request that did nothing (not placed,
//    not holding agents, not the first blocked request of its priority nor
//    the first of its need whose preemption failed, not a restricted request
//    that searched for victims: its walk unlinks candidates) can leave the queue
//    without changing anything for the others: only its reason and its place
//    go. A request that arrives behind an earlier request of the same
//    experiment, priority and need that did nothing, with no holder between
//    them, does nothing too (within a pass free slots only shrink, holds
//    only grow, victims only go and the experiment's slots only grow), and
//    its reason is that request's: nothing else is re-decided;
//  - the decision itself, which a full pass rewrites in place (reasons and
//    order entries that did not change are not built again).
//
// Anything else (an agent or a running allocation changed, the fair share
// policy, a repeated id) runs the full pass: with the kept orders, and, but
// for a repeated id, writing over the kept decision. Used on one thread (the
// scheduling driver's).
#include <cstdint>
#include <vector>

#include "master/scheduler/scheduler.h"
#include "master/scheduler/scheduling_priority.h"

namespace ring {

class PoolScheduler {
 public:
  // How the last pass was decided.
  enum class Path {
    kFull,       // every request tried (with the kept order and decision)
    kUnchanged,  // the same input as the pass before: its decision
    kQueue,      // only requests that arrived or left were decided
  };

  // SchedulePool(input), kept until the next call. `input` is taken and left
  // holding the previous pass's input (empty the first time), for the caller
  // to drop or reuse outside the pass.
  const PoolDecision& Schedule(PoolInput& input);

  Path last_path() const { return last_path_; }
  // Forgets everything kept: the next pass is a full one.
  void Reset();

 private:
  // Matches the new pending requests to the kept ones by id: old_of_new_[i]
  // is the kept index of new request i, or -1 (arrived, or changed in
  // something other than its queued_seq). Returns false when ids repeat.
  void Match(const std::vector<PendingRequest>& now);
  // Carries the kept order and by-id list over to the new indexes, placing
  // the requests that arrived; false if that cannot be done exactly (the
  // caller sorts afresh).
  bool CarryOrder(const std::vector<PendingRequest>& now);
  bool CarryById(const std::vector<PendingRequest>& now);
  // The queue-only pass (see the top of this file); false when a request
  // that arrived or left does not qualify: nothing is changed then.
  bool QueueOnly(const std::vector<PendingRequest>& now);
  // Carries the kept victim order over to the new running allocations;
  // false if that cannot be done exactly (the caller sorts afresh).
  bool CarryVictims(const std::vector<RunningAllocation>& now);
  void Full(const PoolInput& input);

  bool kept_ = false;
  PoolInput input_;                              // of the last pass
  PoolDecision decision_;                        // of the last pass
  std::vector<int> order_;                       // priority: pending indexes in PriorityOrder
  std::vector<int> by_id_;                       // pending indexes by allocation id
  std::vector<int> victims_;                     // running indexes in PriorityVictimOrder
  bool victims_kept_ = false;                    // victims_ are those of input_.running
  std::vector<scheduling::RequestTrace> trace_;  // priority: per pending request
  bool ids_kept_ = false;                        // by_id_ is that of input_ (its ids unique)
  bool order_kept_ = false;                      // order_ and trace_ are those of input_
  Path last_path_ = Path::kFull;
  // Scratch of one call.
  std::vector<int> old_of_new_;
  std::vector<int> new_of_old_;
  std::vector<int> arrived_;  // new indexes not matched
  std::vector<int> left_;     // kept indexes not matched
  bool seq_moved_ = false;    // some matched request's queued_seq changed
};

}  // namespace ring
