#include "master/scheduler/rank_order.h"

#include <algorithm>

namespace ring {

void OrderPlacementsForRanks(std::vector<Placement>& placements) {
  for (auto& p : placements) std::sort(p.slot_ids.begin(), p.slot_ids.end());
  std::sort(placements.begin(), placements.end(), [](const Placement& a, const Placement& b) {
    if (a.slot_ids.size() != b.slot_ids.size()) return a.slot_ids.size() > b.slot_ids.size();
    return a.agent_id < b.agent_id;
  });
}

}  // namespace ring
