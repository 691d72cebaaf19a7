#pragma once
// The order in which an allocation's ranks are laid over its agents. Pure.
#include <vector>

#include "master/scheduler/scheduler.h"

namespace ring {

// Orders `placements` so that ranks 0, 1, ... can be handed out along them:
// first the agent holding the most slots of the allocation (ties broken by
// agent id, ascending), then the other agents in the same order; within an
// agent the slot ids ascend, so local rank i runs on the i-th smallest slot.
// Rank 0's agent is thus the same for the same placements, whatever order
// the scheduler listed them in, and its address is MASTER_ADDR.
void OrderPlacementsForRanks(std::vector<Placement>& placements);

}  // namespace ring
