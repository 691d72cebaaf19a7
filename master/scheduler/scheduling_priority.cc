#include "master/scheduler/scheduling_priority.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "master/scheduler/scheduling_pass.h"

namespace ring::scheduling {

std::vector<int> PriorityOrder(const std::vector<PendingRequest>& pending) {
  // Sorted by compact keys: the requests themselves are large and scattered.
  struct Key {
    int priority;
    int index;
    int64_t queued_seq;
  };
  std::vector<Key> keys;
  keys.reserve(pending.size());
  for (int p = 0; p < static_cast<int>(pending.size()); ++p)
    keys.push_back({pending[p].priority, p, pending[p].queued_seq});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.queued_seq != b.queued_seq) return a.queued_seq < b.queued_seq;
    return pending[a.index].allocation_id < pending[b.index].allocation_id;
  });
  std::vector<int> order;
  order.reserve(keys.size());
  for (const auto& k : keys) order.push_back(k.index);
  return order;
}

std::vector<int> PriorityVictimOrder(const std::vector<RunningAllocation>& running) {
  // Sorted by compact keys, as PriorityOrder.
  struct Key {
    int priority;
    int index;
    int64_t started_seq;
  };
  std::vector<Key> keys;
  for (int i = 0; i < static_cast<int>(running.size()); ++i)
    if (running[i].preemptible && !running[i].preempting)
      keys.push_back({running[i].priority, i, running[i].started_seq});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.started_seq != b.started_seq) return a.started_seq > b.started_seq;
    return running[a.index].allocation_id < running[b.index].allocation_id;
  });
  std::vector<int> order;
  order.reserve(keys.size());
  for (const auto& k : keys) order.push_back(k.index);
  return order;
}

namespace {

// The pass in `order`; records what each request did in `trace` when given.
void Decide(PoolPass& pass, const PoolInput& input, const std::vector<int>& order,
            std::vector<int> victim_order, std::vector<RequestTrace>* trace) {
  Candidates victims(input.policy.preemption ? std::move(victim_order) : std::vector<int>{},
                     pass.footprints(), Candidates::Admission::kEvery);
  // Victims come lowest priority first, so those a request may stop (of
  // strictly lower priority) are a prefix of them, which only shrinks as the
  // pass goes on to lower priorities: beyond it, nobody is taken again.
  std::vector<int> victim_levels;  // by position
  for (int k = 0; k < victims.size(); ++k) victim_levels.push_back(input.running[victims.at(k)].priority);
  const std::function<VictimSearch::Verdict(int)> admit = [](int) { return VictimSearch::Verdict::kTake; };
  // Within a pass free slots only shrink and victims only go, so a need that
  // preemption could not place stays unplaceable for every later (same or
  // lower priority) request.
  std::set<Need> preemption_failed;
  std::set<int> reserved_levels;  // priorities whose first blocked request has held agents
  std::optional<int> last_level;  // the priority looked up last (in reserved_levels since)
  if (trace) trace->assign(input.pending.size(), RequestTrace{});
  RequestTrace ignored;
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) pass.Prefetch(order[i + kAhead]);
    const int p = order[i];
    const int priority = pass.brief(p).priority;
    RequestTrace& t = trace ? (*trace)[p] : ignored;
    pass.Consider(p);
    const PoolPass::Excluding excluding(pass, p);
    t.capped_at = pass.CappedSlots(pass.experiment_of_request(p));
    if (!pass.Admissible(p) || pass.PlaceNow(p) || pass.WaitForLeaving(p)) continue;
    if (input.policy.preemption && !preemption_failed.count(pass.need(p))) {
      auto lower = std::partition_point(victim_levels.begin(), victim_levels.end(),
                                        [&](int level) { return level > priority; });
      victims.Retire(static_cast<int>(lower - victim_levels.begin()));
      if (pass.Preempt(p, victims, admit)) continue;
      if (!pass.Restricted(p)) t.failed_insert = preemption_failed.insert(pass.need(p)).second;
    }
    if (last_level != priority && reserved_levels.insert(priority).second) {
      t.new_level = true;
      pass.HoldFor(p);
    }
    last_level = priority;
  }
  if (!trace) return;
  for (int p : order) {
    (*trace)[p].assigned = pass.Assigned(p);
    (*trace)[p].holder = pass.Holds(p);
  }
}

}  // namespace

PoolDecision SchedulePriority(const PoolInput& input) {
  PoolPass pass(input);
  Decide(pass, input, PriorityOrder(input.pending),
         input.policy.preemption ? PriorityVictimOrder(input.running) : std::vector<int>{}, nullptr);
  return pass.Finish(true);
}

void SchedulePriority(const PoolInput& input, const KnownOrders& known, PoolDecision& into,
                      std::vector<RequestTrace>& trace) {
  PoolPass pass(input);
  pass.ReuseAssignments(std::move(into.assignments));
  Decide(pass, input, known.order, input.policy.preemption ? known.victims : std::vector<int>{}, &trace);
  pass.FinishInto(true, known.by_id, into);
}

}  // namespace ring::scheduling
