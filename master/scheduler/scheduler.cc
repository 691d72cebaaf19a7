#include "master/scheduler/scheduler.h"

#include <algorithm>
#include <map>
#include <string>

#include "master/scheduler/scheduling_fair_share.h"
#include "master/scheduler/scheduling_placement.h"
#include "master/scheduler/scheduling_priority.h"
#include "master/scheduler/scheduling_reasons.h"

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

bool CanRunContainers(const AgentView& agent, const ContainerNeed& need) {
  const bool image_here = agent.slot_type == "cuda" ? need.cuda : need.cpu;
  if (!image_here) return true;
  if (need.runtime.empty()) return !agent.container_runtimes.empty();
  return std::find(agent.container_runtimes.begin(), agent.container_runtimes.end(), need.runtime) !=
         agent.container_runtimes.end();
}

std::optional<std::string> NeverFits(const std::vector<AgentView>& pool_agents, int slots, bool single_node) {
  if (pool_agents.empty()) return std::nullopt;
  return scheduling::NeverFitsIn(pool_agents, scheduling::NeedOf(slots, single_node),
                                 pool_agents.front().pool);
}

}  // namespace ring
