#include "master/core/scheduling_preemption.h"

#include <algorithm>

namespace ring::scheduling {

Candidates::Candidates(std::vector<int> order) : order_(std::move(order)), next_(order_.size() + 1) {
  for (size_t k = 0; k < next_.size(); ++k) next_[k] = static_cast<int>(k);
}

int Candidates::Next(int k) {
  int root = k;
  while (next_[root] != root) root = next_[root];
  while (next_[k] != root) {  // path compression
    const int after = next_[k];
    next_[k] = root;
    k = after;
  }
  return root;
}

VictimSearch::VictimSearch(const PoolSlots& slots, const std::vector<std::vector<std::pair<int, int>>>& where,
                           const std::vector<char>& gone)
    : slots_(slots),
      where_(where),
      gone_(gone),
      freed_(slots.agent_count(), 0),
      made_idle_(slots.shapes().size()) {}

int VictimSearch::Capacity(int a) const {
  return std::min(slots_.total(a), slots_.free(a) + slots_.leaving(a) + freed_[a]);
}

void VictimSearch::Reset() {
  for (int a : touched_) freed_[a] = 0;
  touched_.clear();
  for (int g : touched_shapes_) made_idle_[g].clear();
  touched_shapes_.clear();
}

std::optional<VictimSearch::Choice> VictimSearch::Find(int slots, PoolPolicy::Fit policy,
                                                       Candidates& candidates,
                                                       const std::function<Verdict(int)>& admit) {
  Reset();
  if (slots <= 0) return std::nullopt;
  std::vector<int> taken;
  std::vector<int> reached;  // agents this victim brings to `slots`
  for (int k = candidates.Next(0); k < candidates.size(); k = candidates.Next(k + 1)) {
    const int c = candidates.at(k);
    const auto& parts = where_[c];
    const bool frees_usable = std::any_of(
        parts.begin(), parts.end(), [&](const auto& p) { return p.first >= 0 && slots_.usable(p.first); });
    if (gone_[c] || !frees_usable) {
      candidates.Drop(k);
      continue;
    }
    const Verdict verdict = admit(c);
    if (verdict == Verdict::kStop) break;
    if (verdict == Verdict::kSkip) continue;
    taken.push_back(c);
    reached.clear();
    int idle_shape = -1;  // the largest shape this victim completes a whole fit in
    for (const auto& [a, n] : parts) {
      if (a < 0 || !slots_.usable(a)) continue;
      const int before = Capacity(a);
      if (freed_[a] == 0) touched_.push_back(a);
      freed_[a] += n;
      const int after = Capacity(a);
      if (before < slots && after >= slots) reached.push_back(a);
      const int g = slots_.shape(a);
      if (g < 0 || before == slots_.total(a) || after != slots_.total(a)) continue;
      if (made_idle_[g].empty()) touched_shapes_.push_back(g);
      made_idle_[g].push_back(a);
      const int size = slots_.shapes()[g].size;
      if (size >= slots || slots % size != 0) continue;
      const size_t have = slots_.idle(g).size() + slots_.idle_when_left(g).size() + made_idle_[g].size();
      if (have >= static_cast<size_t>(slots / size) && (idle_shape < 0 || g < idle_shape)) idle_shape = g;
    }
    if (!reached.empty()) {
      std::set<std::pair<int, int>> by_capacity;
      for (int a : reached) by_capacity.insert({Capacity(a), a});
      return SingleAgent(slots, *PickBySize(by_capacity, slots, policy), taken);
    }
    if (idle_shape >= 0) return WholeAgents(slots, idle_shape, taken);
  }
  return std::nullopt;
}

VictimSearch::Choice VictimSearch::SingleAgent(int slots, int agent, const std::vector<int>& taken) const {
  auto on_agent = [&](int v) {
    int n = 0;
    for (const auto& [a, k] : where_[v])
      if (a == agent) n += k;
    return n;
  };
  std::vector<int> kept;
  for (int v : taken)
    if (on_agent(v) > 0) kept.push_back(v);
  // Spare victims from the last taken (the most valuable) backwards while
  // the others still make room.
  int capacity = Capacity(agent);
  for (size_t i = kept.size(); i-- > 0;) {
    const int n = on_agent(kept[i]);
    if (capacity - n >= slots) {
      capacity -= n;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return {std::move(kept), Fit{{agent}, false}};
}

VictimSearch::Choice VictimSearch::WholeAgents(int slots, int shape, const std::vector<int>& taken) const {
  const size_t need = static_cast<size_t>(slots / slots_.shapes()[shape].size);
  Fit fit{{}, true};
  // Agents that need nobody stopped first, then those already emptying.
  for (int a : slots_.idle(shape))
    if (fit.agents.size() < need) fit.agents.push_back(a);
  for (int a : slots_.idle_when_left(shape))
    if (fit.agents.size() < need) fit.agents.push_back(a);
  std::vector<int> emptied;
  for (int a : made_idle_[shape])
    if (fit.agents.size() < need) {
      fit.agents.push_back(a);
      emptied.push_back(a);
    }
  std::sort(fit.agents.begin(), fit.agents.end());
  std::sort(emptied.begin(), emptied.end());
  std::vector<int> kept;
  for (int v : taken)
    for (const auto& [a, n] : where_[v])
      if (std::binary_search(emptied.begin(), emptied.end(), a)) {
        kept.push_back(v);
        break;
      }
  return {std::move(kept), std::move(fit)};
}

}  // namespace ring::scheduling
