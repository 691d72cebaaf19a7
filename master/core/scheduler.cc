#include "master/core/scheduler.h"

#include <algorithm>
#include <string>

namespace ring {
namespace {

bool PlaceOnOne(std::vector<AgentView>& agents, const SlotRequest& req, Assignment& out) {
  AgentView* best = nullptr;
  for (auto& a : agents) {
    if (a.pool != req.pool || static_cast<int>(a.free_slots.size()) < req.slots) continue;
    if (!best || a.free_slots.size() < best->free_slots.size() ||
        (a.free_slots.size() == best->free_slots.size() && a.id < best->id))
      best = &a;
  }
  if (!best) return false;
  Placement p{best->id, {best->free_slots.begin(), best->free_slots.begin() + req.slots}};
  best->free_slots.erase(best->free_slots.begin(), best->free_slots.begin() + req.slots);
  out.placements.push_back(std::move(p));
  return true;
}

// Larger than one agent: whole idle agents of equal size whose slots add up exactly.
bool PlaceOnMany(std::vector<AgentView>& agents, const SlotRequest& req, Assignment& out) {
  std::vector<AgentView*> idle;
  for (auto& a : agents)
    if (a.pool == req.pool && a.total_slots > 0 && static_cast<int>(a.free_slots.size()) == a.total_slots)
      idle.push_back(&a);
  std::sort(idle.begin(), idle.end(), [](const AgentView* x, const AgentView* y) {
    return x->total_slots != y->total_slots ? x->total_slots > y->total_slots : x->id < y->id;
  });
  for (size_t i = 0; i < idle.size(); ++i) {
    const int size = idle[i]->total_slots;
    if (req.slots % size != 0) continue;
    const size_t need = static_cast<size_t>(req.slots / size);
    std::vector<AgentView*> chosen;
    for (size_t j = i; j < idle.size() && chosen.size() < need; ++j)
      if (idle[j]->total_slots == size && idle[j]->slot_type == idle[i]->slot_type) chosen.push_back(idle[j]);
    if (chosen.size() != need) continue;
    for (auto* a : chosen) {
      out.placements.push_back({a->id, a->free_slots});
      a->free_slots.clear();
    }
    return true;
  }
  return false;
}

}  // namespace

std::vector<Assignment> Schedule(std::vector<AgentView> agents, const std::vector<SlotRequest>& pending) {
  std::vector<Assignment> out;
  for (const auto& req : pending) {
    if (req.slots <= 0) continue;
    Assignment a{req.allocation_id, {}};
    if (PlaceOnOne(agents, req, a) || PlaceOnMany(agents, req, a)) out.push_back(std::move(a));
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
