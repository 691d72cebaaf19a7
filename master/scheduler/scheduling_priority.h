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

}  // namespace ring::scheduling
