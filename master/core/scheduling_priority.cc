#include "master/core/scheduling_priority.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "master/core/scheduling_pass.h"

namespace ring::scheduling {

std::vector<int> PriorityOrder(const std::vector<PendingRequest>& pending) {
  std::vector<int> order(pending.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const auto& a = pending[x];
    const auto& b = pending[y];
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.queued_seq != b.queued_seq) return a.queued_seq < b.queued_seq;
    return a.allocation_id < b.allocation_id;
  });
  return order;
}

std::vector<int> PriorityVictimOrder(const std::vector<RunningAllocation>& running) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(running.size()); ++i)
    if (running[i].preemptible && !running[i].preempting) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const auto& a = running[x];
    const auto& b = running[y];
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.started_seq != b.started_seq) return a.started_seq > b.started_seq;
    return a.allocation_id < b.allocation_id;
  });
  return order;
}

PoolDecision SchedulePriority(const PoolInput& input) {
  PoolPass pass(input);
  Candidates victims(input.policy.preemption ? PriorityVictimOrder(input.running) : std::vector<int>{});
  // Within a pass free slots only shrink and victims only go, so a size that
  // preemption could not place stays unplaceable for every later (same or
  // lower priority) request.
  std::set<int> preemption_failed;
  std::set<int> reserved_levels;  // priorities whose first blocked request has held agents
  for (int p : PriorityOrder(input.pending)) {
    const auto& r = input.pending[p];
    pass.Consider(p);
    if (!pass.Admissible(p) || pass.PlaceNow(p) || pass.WaitForLeaving(p)) continue;
    if (input.policy.preemption && !preemption_failed.count(r.slots)) {
      auto admit = [&](int i) {
        return pass.running(i).priority > r.priority ? VictimSearch::Verdict::kTake
                                                     : VictimSearch::Verdict::kStop;
      };
      if (pass.Preempt(p, victims, admit)) continue;
      preemption_failed.insert(r.slots);
    }
    if (reserved_levels.insert(r.priority).second) pass.HoldFor(p);
  }
  return pass.Finish(true);
}

}  // namespace ring::scheduling
