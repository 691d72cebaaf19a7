#pragma once
// The fair_share policy of a pool: max-min fair shares of the pool's slots by
// experiment weight, experiments taking turns furthest-below-share first,
// reclaim by preemption from experiments above their share, and leftover
// slots to requests beyond their share. The rules are in scheduler.h and
// docs/scheduling.md.
#include <cstdint>
#include <map>
#include <vector>

#include "master/scheduler/scheduler.h"

namespace ring::scheduling {

class PoolPass;

struct ExperimentDemand {
  int64_t experiment_id = 0;
  double weight = 1;
  int demand = 0;  // slots it runs and asks for, capped by max_slots
};

// Water filling: `capacity` slots divided in proportion to weight; an
// experiment whose demand is below its proportion gets exactly its demand and
// the rest is divided again among the others. Shares are fractional and add
// up to min(capacity, total demand).
std::map<int64_t, double> FairShares(const std::vector<ExperimentDemand>& demands, int capacity);

// Each experiment's demand in a pool: slots of its running allocations that
// are not stopping plus its pending requests that some agent shape takes,
// capped by its max_slots; weight and max_slots as its requests carry them
// (the largest weight and the smallest max_slots if they disagree). In
// experiment id order; read from a pass over the pool (its request briefs).
std::vector<ExperimentDemand> Demands(const PoolPass& pass);

PoolDecision ScheduleFairShare(const PoolInput& input);
// The same decision written over `into`, a kept scheduler's previous one
// (PoolPass::FinishInto); `by_id`: the pending indexes by allocation id
// (ids unique).
void ScheduleFairShare(const PoolInput& input, const std::vector<int>& by_id, PoolDecision& into);

}  // namespace ring::scheduling
