#pragma once
// The priority policy of a pool: lower priority numbers first, FIFO within a
// priority, preemption of strictly lower priorities, and a reservation for
// the first blocked request of each priority (the backfill rule). The rules
// are in scheduler.h and docs/scheduling.md.
#include <vector>

#include "master/scheduler/scheduler.h"

namespace ring::scheduling {

// Pending request indexes in scheduling order: priority, then queued_seq,
// then allocation id.
std::vector<int> PriorityOrder(const std::vector<PendingRequest>& pending);

// Running allocations that may be preempted, in the order they are taken:
// lowest priority (highest number) first, then newest started, then id.
std::vector<int> PriorityVictimOrder(const std::vector<RunningAllocation>& running);

PoolDecision SchedulePriority(const PoolInput& input);

// What one request did in a pass, for a kept scheduler (pool_scheduler.h) to
// tell which requests a change of the queue cannot affect.
struct RequestTrace {
  int capped_at = 0;           // its experiment's CappedSlots when it was tried
  bool assigned = false;       // given slots
  bool holder = false;         // holds agents: promised slots or a reservation
  bool new_level = false;      // the first blocked request of its priority (tried to hold)
  bool failed_insert = false;  // the first of its need whose preemption failed
  // A restricted request's victim search: it walks the candidates and may
  // unlink some for the searches after it.
  bool walked = false;
  // None of the above: taking it out of the pass changes nothing else.
  bool inert() const { return !assigned && !holder && !new_level && !failed_insert && !walked; }
};

// What a kept scheduler already knows of a pass's input: `order` is
// PriorityOrder(input.pending), `by_id` the pending indexes by allocation id
// (ids unique), `victims` PriorityVictimOrder(input.running).
struct KnownOrders {
  const std::vector<int>& order;
  const std::vector<int>& by_id;
  const std::vector<int>& victims;
};

// SchedulePriority with those orders. The decision is written over `into`
// (see PoolPass::FinishInto); `trace` gets one entry per pending request.
void SchedulePriority(const PoolInput& input, const KnownOrders& known, PoolDecision& into,
                      std::vector<RequestTrace>& trace);

}  // namespace ring::scheduling
