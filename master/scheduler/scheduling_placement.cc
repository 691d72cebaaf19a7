#include "master/scheduler/scheduling_placement.h"

#include <algorithm>
#include <map>

namespace ring::scheduling {

PoolSlots::PoolSlots(const std::vector<AgentView>& agents) {
  // By id: the views' order when their ids ascend (the usual case), else
  // as std::sort orders them (sorting the indexes makes the same moves as
  // sorting the agents would, so agents of a repeated id keep that order).
  std::vector<int> order(agents.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  bool ascending = true;
  for (size_t i = 1; i < agents.size() && ascending; ++i) ascending = agents[i - 1].id < agents[i].id;
  if (!ascending)
    std::sort(order.begin(), order.end(), [&](int x, int y) { return agents[x].id < agents[y].id; });
  agents_.reserve(agents.size());
  for (int i : order) {
    const auto& v = agents[i];
    Agent a;
    a.view = &v;
    a.enabled = v.enabled;
    a.free = v.free_slots;
    std::sort(a.free.begin(), a.free.end());
    a.free.erase(std::unique(a.free.begin(), a.free.end()), a.free.end());
    a.total = std::max(v.total_slots, static_cast<int>(a.free.size()));
    agents_.push_back(std::move(a));
  }
  size_t table = 1;
  while (table < 2 * agents_.size()) table *= 2;
  by_id_.assign(table, IdSlot{});
  for (int i = 0; i < agent_count(); ++i) {
    usable_.push_back(agents_[i].enabled);
    rooms_.push_back({agents_[i].total, free(i)});
    // Of an id given twice, the first agent in order.
    const std::string& id = agents_[i].view->id;
    const size_t hash = std::hash<std::string_view>{}(id);
    for (size_t at = hash & (table - 1);; at = (at + 1) & (table - 1)) {
      IdSlot& slot = by_id_[at];
      if (slot.agent < 0) {
        slot = {hash, i};
        break;
      }
      if (slot.hash == hash && agents_[slot.agent].view->id == id) break;
    }
  }

  std::map<std::pair<int, std::string>, int> shape_of;  // (-size, slot type): largest first
  for (const auto& a : agents_)
    if (a.total > 0) shape_of.emplace(std::make_pair(-a.total, a.view->slot_type), 0);
  for (auto& [key, index] : shape_of) {
    index = static_cast<int>(shapes_.size());
    shapes_.push_back({-key.first, key.second, 0, 0});
  }
  for (const auto& a : agents_) max_size_ = std::max(max_size_, a.total);
  by_free_.Reset(agent_count(), max_size_);
  by_free_or_left_.Reset(agent_count(), max_size_);
  idle_.assign(shapes_.size(), IndexSet(agent_count()));
  idle_when_left_.assign(shapes_.size(), IndexSet(agent_count()));
  for (int i = 0; i < agent_count(); ++i) {
    auto& a = agents_[i];
    if (a.total > 0) {
      a.shape = shape_of.at({-a.total, a.view->slot_type});
      ++shapes_[a.shape].agents;
    }
    if (!a.enabled) continue;
    ++enabled_agents_;
    enabled_slots_ += a.total;
    max_enabled_size_ = std::max(max_enabled_size_, a.total);
    if (a.shape >= 0) ++shapes_[a.shape].enabled;
    Index(i);
  }
}

int PoolSlots::Find(const std::string& agent_id) const {
  const size_t hash = std::hash<std::string_view>{}(agent_id);
  const size_t mask = by_id_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const IdSlot& slot = by_id_[at];
    if (slot.agent < 0) return -1;
    if (slot.hash == hash && agents_[slot.agent].view->id == agent_id) return slot.agent;
  }
}

void PoolSlots::Index(int a) {
  const auto& s = agents_[a];
  if (!usable(a)) return;
  const int f = free(a);
  if (f > 0) by_free_.Insert(f, a);
  if (s.shape >= 0 && f == s.total) idle_[s.shape].insert(a);
  if (s.leaving > 0) {
    by_free_or_left_.Insert(f + s.leaving, a);
    if (s.shape >= 0 && f + s.leaving == s.total) idle_when_left_[s.shape].insert(a);
  }
}

void PoolSlots::Unindex(int a) {
  const auto& s = agents_[a];
  if (!usable(a)) return;
  const int f = free(a);
  if (f > 0) by_free_.Erase(f, a);
  if (s.shape >= 0) idle_[s.shape].erase(a);
  if (s.leaving > 0) {
    by_free_or_left_.Erase(f + s.leaving, a);
    if (s.shape >= 0) idle_when_left_[s.shape].erase(a);
  }
}

std::optional<Fit> PoolSlots::WholeFit(int slots, bool count_leaving) const {
  for (int g = 0; g < static_cast<int>(shapes_.size()); ++g) {
    const int size = shapes_[g].size;
    if (size >= slots || slots % size != 0) continue;
    const size_t need = static_cast<size_t>(slots / size);
    const size_t later = count_leaving ? idle_when_left_[g].size() : 0;
    if (idle_[g].size() + later < need) continue;
    Fit fit{{}, true};
    for (auto it = idle_[g].begin(); it != idle_[g].end() && fit.agents.size() < need; ++it)
      fit.agents.push_back(*it);
    for (auto it = idle_when_left_[g].begin();
         count_leaving && it != idle_when_left_[g].end() && fit.agents.size() < need; ++it)
      fit.agents.push_back(*it);
    std::sort(fit.agents.begin(), fit.agents.end());
    return fit;
  }
  return std::nullopt;
}

std::optional<Fit> PoolSlots::FitNow(const Need& need, PoolPolicy::Fit policy) const {
  // A task of no slot (a pool's zero_slot_tasks) runs on the first usable agent.
  if (need.slots == 0)
    for (int a = 0; a < agent_count(); ++a)
      if (usable(a)) return Fit{{a}, false};
  if (need.slots <= 0) return std::nullopt;
  if (auto a = by_free_.Pick(need.slots, policy)) return Fit{{*a}, false};
  if (!need.whole_agents()) return std::nullopt;
  return WholeFit(need.slots, false);
}

std::optional<Fit> PoolSlots::FitWhenLeft(const Need& need, PoolPolicy::Fit policy) const {
  if (need.slots <= 0) return std::nullopt;
  if (auto a = by_free_or_left_.Pick(need.slots, policy)) return Fit{{*a}, false};
  if (!need.whole_agents()) return std::nullopt;
  return WholeFit(need.slots, true);
}

void PoolSlots::Take(const Fit& fit, int slots, const std::string& allocation_id, Assignment& out) {
  out.allocation_id = allocation_id;
  out.placements.resize(fit.agents.size());
  for (size_t j = 0; j < fit.agents.size(); ++j) {
    const int a = fit.agents[j];
    auto& s = agents_[a];
    const size_t n = fit.whole ? s.free.size() : static_cast<size_t>(slots);
    Unindex(a);
    auto& placement = out.placements[j];
    placement.agent_id = s.view->id;
    placement.slot_ids.assign(s.free.begin(), s.free.begin() + static_cast<std::ptrdiff_t>(n));
    s.free.erase(s.free.begin(), s.free.begin() + static_cast<std::ptrdiff_t>(n));
    UpdateRoom(a);
    Index(a);
  }
}

void PoolSlots::AddLeaving(int a, int slots) {
  auto& s = agents_[a];
  Unindex(a);
  s.leaving = std::min(s.leaving + slots, s.total - free(a));
  ++leaving_added_;
  UpdateRoom(a);
  Index(a);
}

void PoolSlots::Hold(int a) {
  Unindex(a);
  agents_[a].held = true;
  usable_[a] = 0;
  changes_.push_back(a);
}

std::vector<int> PoolSlots::Hide(const std::vector<std::string>& agent_ids) {
  std::vector<int> agents;
  for (const auto& id : agent_ids) agents.push_back(Find(id));
  return HideIndexes(agents);
}

std::vector<int> PoolSlots::HideIndexes(const std::vector<int>& agents) {
  std::vector<int> hidden;
  for (int a : agents) {
    if (a < 0 || !usable(a)) continue;
    Unindex(a);
    usable_[a] = 0;
    hidden.push_back(a);
    changes_.push_back(a);
  }
  hidden_ += static_cast<int>(hidden.size());
  return hidden;
}

void PoolSlots::Unhide(const std::vector<int>& hidden) {
  for (int a : hidden) {
    usable_[a] = agents_[a].enabled && !agents_[a].held;
    Index(a);
    changes_.push_back(a);
  }
  hidden_ -= static_cast<int>(hidden.size());
}

int PoolSlots::LargestFreeBlock() const {
  int out = 0;
  for (int a = 0; a < agent_count(); ++a)
    if (enabled(a)) out = std::max(out, free(a));
  return out;
}

std::vector<int> PoolSlots::IdleEnabledPerShape() const {
  std::vector<int> out(shapes_.size(), 0);
  for (int a = 0; a < agent_count(); ++a)
    if (enabled(a) && agents_[a].shape >= 0 && free(a) == agents_[a].total) ++out[agents_[a].shape];
  return out;
}

}  // namespace ring::scheduling
