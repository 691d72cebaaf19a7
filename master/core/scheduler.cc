#include "master/core/scheduler.h"

#include <algorithm>
#include <map>
#include <string>

#include "master/core/scheduling_fair_share.h"
#include "master/core/scheduling_placement.h"
#include "master/core/scheduling_priority.h"
#include "master/core/scheduling_reasons.h"

namespace ring {

PoolDecision SchedulePool(const PoolInput& input) {
  switch (input.policy.type) {
    case PoolPolicy::Type::kFairShare:
      return scheduling::ScheduleFairShare(input);
    case PoolPolicy::Type::kPriority:
      break;
  }
  return scheduling::SchedulePriority(input);
}

std::optional<std::string> NeverFits(const std::vector<AgentView>& pool_agents, int slots) {
  if (pool_agents.empty()) return std::nullopt;
  return scheduling::NeverFitsIn(pool_agents, slots, pool_agents.front().pool);
}

std::vector<Assignment> Schedule(std::vector<AgentView> agents, const std::vector<SlotRequest>& pending) {
  std::map<std::string, std::vector<AgentView>> by_pool;
  for (auto& a : agents) by_pool[a.pool].push_back(std::move(a));
  std::map<std::string, scheduling::PoolSlots> pools;
  std::vector<Assignment> out;
  for (const auto& req : pending) {
    if (req.slots <= 0) continue;
    auto it = pools.find(req.pool);
    if (it == pools.end()) it = pools.emplace(req.pool, scheduling::PoolSlots(by_pool[req.pool])).first;
    if (auto fit = it->second.FitNow(req.slots, PoolPolicy::Fit::kBest))
      out.push_back(it->second.Take(*fit, req.slots, req.allocation_id));
  }
  return out;
}

std::string PendingReason(const std::vector<AgentView>& agents, const SlotRequest& request) {
  int most_free = 0;
  int in_pool = 0;
  for (const auto& a : agents) {
    if (a.pool != request.pool) continue;
    ++in_pool;
    most_free = std::max(most_free, static_cast<int>(a.free_slots.size()));
  }
  if (in_pool == 0) return "no agents are connected in pool " + request.pool;
  return "waiting for " + std::to_string(request.slots) + " free slots in pool " + request.pool +
         "; the most free on one agent is " + std::to_string(most_free);
}

}  // namespace ring
