#include "master/scheduler/scheduling_preemption.h"

#include <algorithm>

namespace ring::scheduling {

Footprints::Footprints(const std::vector<RunningAllocation>& running, const PoolSlots& slots) {
  begin_.reserve(running.size() + 1);
  begin_.push_back(0);
  for (const auto& r : running) {
    for (const auto& p : r.placements)
      parts_.push_back({slots.Find(p.agent_id), static_cast<int>(p.slot_ids.size())});
    begin_.push_back(static_cast<int>(parts_.size()));
  }
}

Footprints::Footprints(const Footprints& from, const std::vector<int>& order) {
  begin_.reserve(order.size() + 1);
  begin_.push_back(0);
  for (int i : order) {
    const auto parts = from.of(i);
    parts_.insert(parts_.end(), parts.begin(), parts.end());
    begin_.push_back(static_cast<int>(parts_.size()));
  }
}

Candidates::Candidates(std::vector<int> order, const Footprints& where, Admission admission)
    : order_(std::move(order)),
      parts_(where, order_),
      admission_(admission),
      end_(static_cast<int>(order_.size())),
      next_(order_.size() + 1) {
  for (size_t k = 0; k < next_.size(); ++k) next_[k] = static_cast<int>(k);
  for (int k = 0; k < size(); ++k)
    for (const auto& [a, n] : parts(k)) {
      if (a < 0) continue;
      if (a >= static_cast<int>(slots_on_.size())) slots_on_.resize(a + 1, 0);
      slots_on_[a] += n;
    }
  if (!indexed()) return;
  if (admission_ == Admission::kMarked) admitted_.assign(order_.size(), 1);
  // Each agent's candidates in position order (a counting sort by agent).
  agent_begin_.assign(slots_on_.size() + 1, 0);
  for (int k = 0; k < size(); ++k)
    for (const auto& [a, n] : parts(k))
      if (a >= 0) ++agent_begin_[a + 1];
  for (size_t a = 1; a < agent_begin_.size(); ++a) agent_begin_[a] += agent_begin_[a - 1];
  on_agent_.resize(agent_begin_.back());
  std::vector<int> fill(agent_begin_.begin(), agent_begin_.end() - 1);
  for (int k = 0; k < size(); ++k)
    for (const auto& [a, n] : parts(k))
      if (a >= 0) on_agent_[fill[a]++] = {k, n};
}

void Candidates::Retire(int k) {
  for (; end_ > k; --end_)
    for (const auto& [a, n] : parts(end_ - 1))
      if (a >= 0) slots_on_[a] -= n;
}

std::vector<int>& Candidates::Links(const Need& need) {
  if (need != last_need_ || !last_links_) {
    auto it = next_for_.find(need);
    if (it == next_for_.end()) it = next_for_.emplace(need, next_).first;
    last_need_ = need;
    last_links_ = &it->second;
  }
  return *last_links_;
}

int Candidates::Next(std::vector<int>& next, int k) {
  int root = k;
  while (next[root] != root) root = next[root];
  while (next[k] != root) {  // path compression
    const int after = next[k];
    next[k] = root;
    k = after;
  }
  return root;
}

int Candidates::Next(int k, const Need& need) {
  return Next(Links(need), k);
}

void Candidates::Drop(int k) {
  Unlink(next_, k);
  for (auto& [slots, next] : next_for_) Unlink(next, k);
  unlinked_.push_back(k);
}

VictimSearch::VictimSearch(const PoolSlots& slots, const Footprints& where, const std::vector<char>& gone)
    : slots_(slots),
      where_(where),
      gone_(gone),
      freed_(slots.agent_count(), 0),
      made_idle_(slots.shapes().size()) {}

bool VictimSearch::FreesUsable(std::span<const std::pair<int, int>> parts) const {
  return std::any_of(parts.begin(), parts.end(),
                     [&](const auto& p) { return p.first >= 0 && slots_.usable(p.first); });
}

bool VictimSearch::Open(int a) const {
  return slots_.usable(a) || (slots_.enabled(a) && !slots_.held(a));
}

bool VictimSearch::FreesOpen(std::span<const std::pair<int, int>> parts) const {
  return std::any_of(parts.begin(), parts.end(),
                     [&](const auto& p) { return p.first >= 0 && Open(p.first); });
}

// Whether some usable agent of candidate k could reach the need's slots (or,
// for a whole-agent fit, become idle) if every candidate on it before end()
// stopped. Victims already gone count twice in that bound (as leaving, and
// as candidates), so it is never too low. `open`: agents hidden for the
// searching request count too (whether it could help some other request).
bool VictimSearch::CanHelp(const Candidates& candidates, int k, const Need& need, bool open) const {
  const int slots = need.slots;
  for (const auto& [a, n] : candidates.parts(k)) {
    if (a < 0 || !(open ? Open(a) : slots_.usable(a))) continue;
    const int total = slots_.total(a);
    const int most = std::min(total, slots_.free_or_leaving(a) + candidates.slots_on(a));
    if (total >= slots ? most >= slots
                       : need.whole_agents() && total > 0 && slots % total == 0 && most == total)
      return true;
  }
  return false;
}

int VictimSearch::PickAgent(const std::vector<int>& agents, int slots, PoolPolicy::Fit policy) const {
  // Best fit: the smallest capacity >= slots; worst fit: the largest; the
  // lowest agent of it (as AgentsBySize::Pick).
  const bool best_fit = policy == PoolPolicy::Fit::kBest;
  int chosen = -1;
  int chosen_capacity = 0;
  for (int a : agents) {
    const int capacity = Capacity(a);
    if (best_fit && capacity < slots) continue;
    const bool better = chosen < 0 || (best_fit ? capacity < chosen_capacity : capacity > chosen_capacity) ||
                        (capacity == chosen_capacity && a < chosen);
    if (better) {
      chosen = a;
      chosen_capacity = capacity;
    }
  }
  return chosen;
}

int VictimSearch::Capacity(int a) const {
  return std::min(slots_.total(a), slots_.free_or_leaving(a) + freed_[a]);
}

void VictimSearch::Reset() {
  for (int a : touched_) freed_[a] = 0;
  touched_.clear();
  for (int g : touched_shapes_) made_idle_[g].clear();
  touched_shapes_.clear();
}

std::optional<VictimSearch::Choice> VictimSearch::Find(const Need& need, PoolPolicy::Fit policy,
                                                       Candidates& candidates,
                                                       const std::function<Verdict(int)>& admit) {
  Reset();
  const int slots = need.slots;
  if (slots <= 0) return std::nullopt;
  if (candidates.indexed() && !slots_.any_hidden()) return FindIndexed(need, policy, candidates);
  // Agents hidden for this request are usable for others: what is useless
  // only because of them is skipped in this search, not unlinked.
  const bool hidden = slots_.any_hidden();
  std::vector<int> taken;
  std::vector<int> reached;  // agents this victim brings to `slots`
  for (int k = candidates.Next(0, need); k < candidates.end(); k = candidates.Next(k + 1, need)) {
    const int c = candidates.at(k);
    const auto parts = candidates.parts(k);
    if (gone_[c] || !FreesUsable(parts)) {
      if (!gone_[c] && hidden && FreesOpen(parts)) continue;
      candidates.Drop(k);
      continue;
    }
    if (candidates.memoryless() && !CanHelp(candidates, k, need, false)) {
      if (!hidden || !CanHelp(candidates, k, need, true)) candidates.DropFor(k, need);
      continue;
    }
    const Verdict verdict = admit(c);
    if (verdict == Verdict::kSkip) continue;
    if (verdict == Verdict::kDrop) {
      candidates.Drop(k);
      continue;
    }
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
      if (!need.whole_agents() || size >= slots || slots % size != 0) continue;
      const size_t have = slots_.idle(g).size() + slots_.idle_when_left(g).size() + made_idle_[g].size();
      if (have >= static_cast<size_t>(slots / size) && (idle_shape < 0 || g < idle_shape)) idle_shape = g;
    }
    if (!reached.empty()) {
      return SingleAgent(slots, PickAgent(reached, slots, policy), taken);
    }
    if (idle_shape >= 0) return WholeAgents(slots, idle_shape, taken);
  }
  return std::nullopt;
}

std::optional<VictimSearch::Choice> VictimSearch::FindIndexed(const Need& need, PoolPolicy::Fit policy,
                                                              Candidates& candidates) {
  auto it = indexes_.find(need);
  if (it == indexes_.end()) it = indexes_.try_emplace(need, slots_, gone_, candidates, need).first;
  ReachIndex& index = it->second;
  const auto stop = index.Find();
  if (!stop) return std::nullopt;
  // What the walk would hold at the candidate it stops at: the slots freed
  // on the agents that matter, and the candidates taken there, in order
  // (those on other agents would be taken and then not kept).
  std::vector<int> positions;
  for (int a : stop->agents) {
    freed_[a] = index.Freed(a, stop->position, stop->shape >= 0 ? &positions : nullptr);
    touched_.push_back(a);
  }
  if (stop->shape < 0) {
    const int agent = PickAgent(stop->agents, need.slots, policy);
    index.Freed(agent, stop->position, &positions);
    std::vector<int> taken;
    for (int k : positions) taken.push_back(candidates.at(k));
    return SingleAgent(need.slots, agent, taken);
  }
  made_idle_[stop->shape] = stop->agents;
  touched_shapes_.push_back(stop->shape);
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::vector<int> taken;
  for (int k : positions) taken.push_back(candidates.at(k));
  return WholeAgents(need.slots, stop->shape, taken);
}

VictimSearch::Choice VictimSearch::SingleAgent(int slots, int agent, const std::vector<int>& taken) const {
  auto on_agent = [&](int v) {
    int n = 0;
    for (const auto& [a, k] : where_.of(v))
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
  const size_t more = need - fit.agents.size();
  // The agents the victims empty, with the slots the victims free on each.
  std::vector<std::pair<int, int>> emptied;  // (agent, freed), ascending
  for (int a : made_idle_[shape]) emptied.push_back({a, freed_[a]});
  std::sort(emptied.begin(), emptied.end());
  auto find = [&](int a) {
    auto it = std::lower_bound(emptied.begin(), emptied.end(), std::make_pair(a, 0),
                               [](const auto& x, const auto& y) { return x.first < y.first; });
    return it != emptied.end() && it->first == a ? it : emptied.end();
  };
  auto idle = [&](int a, int freed) { return slots_.free_or_leaving(a) + freed >= slots_.total(a); };
  // Spare victims from the last taken (the most valuable) backwards while
  // the others still empty enough agents.
  std::vector<char> spared(taken.size(), 0);
  for (size_t i = taken.size(); i-- > 0;) {
    size_t still = 0;
    for (const auto& [a, f] : emptied) {
      int without = f;
      for (const auto& [b, n] : where_.of(taken[i]))
        if (b == a) without -= n;
      if (f > 0 && idle(a, without)) ++still;
    }
    if (still < more) continue;
    spared[i] = 1;
    for (const auto& [b, n] : where_.of(taken[i]))
      if (auto it = find(b); it != emptied.end()) it->second -= n;
    for (auto& [a, f] : emptied)
      if (f > 0 && !idle(a, f)) f = 0;  // no longer emptied
  }
  // Of the agents still emptied, the lowest ids; the victims on them are kept.
  std::vector<int> chosen;
  for (const auto& [a, f] : emptied)
    if (f > 0 && chosen.size() < more) chosen.push_back(a);
  fit.agents.insert(fit.agents.end(), chosen.begin(), chosen.end());
  std::sort(fit.agents.begin(), fit.agents.end());
  std::vector<int> kept;
  for (size_t i = 0; i < taken.size(); ++i) {
    if (spared[i]) continue;
    for (const auto& [a, n] : where_.of(taken[i]))
      if (std::binary_search(chosen.begin(), chosen.end(), a)) {
        kept.push_back(taken[i]);
        break;
      }
  }
  return {std::move(kept), std::move(fit)};
}

}  // namespace ring::scheduling
