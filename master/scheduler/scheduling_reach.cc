#include "master/scheduler/scheduling_reach.h"

#include <algorithm>

#include "master/scheduler/scheduling_preemption.h"

namespace ring::scheduling {

ReachIndex::ReachIndex(const PoolSlots& slots, const std::vector<char>& gone, Candidates& candidates,
                       const Need& need)
    : slots_(slots),
      gone_(gone),
      candidates_(candidates),
      need_(need),
      divides_(slots.shapes().size(), 0),
      reach_at_(slots.agent_count(), kNever),
      idle_at_(slots.agent_count(), kNever),
      idle_(slots.shapes().size()),
      changes_seen_(slots.changes().size()),
      unlinked_seen_(candidates.unlinked().size()),
      flips_seen_(candidates.flips().size()),
      seen_in_sync_(slots.agent_count(), 0) {
  const int positions = candidates.size();
  reach_.set.Reset(positions);
  reach_.count.assign(positions, 0);
  for (size_t g = 0; g < divides_.size(); ++g) {
    const int size = slots.shapes()[g].size;
    divides_[g] = need.whole_agents() && size < need.slots && need.slots % size == 0;
    if (!divides_[g]) continue;
    idle_[g].set.Reset(positions);
    idle_[g].count.assign(positions, 0);
  }
  for (int a = 0; a < slots.agent_count(); ++a) Update(a);
}

std::pair<int, int> ReachIndex::PositionsOf(int a) {
  const int total = slots_.total(a);
  const int g = slots_.shape(a);
  const bool reach = total >= need_.slots;
  const bool idle = g >= 0 && divides_[g];
  std::pair<int, int> at{kNever, kNever};
  if (!reach && !idle) return at;
  const std::vector<int>& links = candidates_.LinksFor(need_);
  int have = slots_.free_or_leaving(a);
  for (const auto& [k, n] : candidates_.on_agent(a)) {
    if (links[k] != k || gone_[candidates_.at(k)] || !candidates_.admitted(k)) continue;
    const int before = std::min(total, have);
    have += n;
    const int after = std::min(total, have);
    if (reach && before < need_.slots && after >= need_.slots) return {k, kNever};
    if (idle && before != total && after == total) return {kNever, k};
  }
  return at;
}

void ReachIndex::Update(int a) {
  const auto [reach, idle] = slots_.usable(a) ? PositionsOf(a) : std::pair<int, int>{kNever, kNever};
  const int g = slots_.shape(a);
  // Most updates move nothing: the sets are touched only when a key changes.
  if (reach != reach_at_[a]) {
    if (reach_at_[a] != kNever) reach_.Remove(reach_at_[a]);
    if (reach != kNever) reach_.Add(reach);
    reach_at_[a] = reach;
  }
  if (idle != idle_at_[a]) {
    if (idle_at_[a] != kNever) idle_[g].Remove(idle_at_[a]);
    if (idle != kNever) idle_[g].Add(idle);
    idle_at_[a] = idle;
  }
}

void ReachIndex::Sync() {
  ++sync_;
  auto update = [&](int a) {
    if (a < 0 || seen_in_sync_[a] == sync_) return;
    seen_in_sync_[a] = sync_;
    Update(a);
  };
  const auto& changes = slots_.changes();
  for (; changes_seen_ < changes.size(); ++changes_seen_) update(changes[changes_seen_]);
  const auto& unlinked = candidates_.unlinked();
  for (; unlinked_seen_ < unlinked.size(); ++unlinked_seen_)
    for (const auto& [a, n] : candidates_.parts(unlinked[unlinked_seen_])) update(a);
  const auto& flips = candidates_.flips();
  for (; flips_seen_ < flips.size(); ++flips_seen_)
    for (const auto& [a, n] : candidates_.parts(flips[flips_seen_])) update(a);
}

void ReachIndex::AgentsAt(int position, const std::vector<int>& at, int shape,
                          std::vector<int>& agents) const {
  const size_t from = agents.size();
  for (const auto& [a, n] : candidates_.parts(position))
    if (a >= 0 && at[a] == position && (shape < 0 || slots_.shape(a) == shape)) agents.push_back(a);
  // In agent order, once each (an allocation may name an agent twice).
  std::sort(agents.begin() + static_cast<std::ptrdiff_t>(from), agents.end());
  agents.erase(std::unique(agents.begin() + static_cast<std::ptrdiff_t>(from), agents.end()), agents.end());
}

std::optional<ReachIndex::Stop> ReachIndex::Find() {
  Sync();
  Stop stop;
  if (!reach_.set.empty()) stop.position = reach_.set.First();
  // A whole-agent fit completes when its last missing agent becomes idle;
  // the largest shape first when several complete at the same candidate.
  int whole_at = kNever;
  for (int g = 0; g < static_cast<int>(idle_.size()); ++g) {
    if (!divides_[g] || idle_[g].agents == 0) continue;
    const size_t wanted = static_cast<size_t>(need_.slots / slots_.shapes()[g].size);
    const size_t have = slots_.idle(g).size() + slots_.idle_when_left(g).size();
    const size_t missing = have >= wanted ? 1 : wanted - have;
    if (static_cast<size_t>(idle_[g].agents) < missing) continue;
    // The position of the missing-th agent to become idle.
    size_t counted = 0;
    int at = idle_[g].set.First();
    for (;; at = idle_[g].set.Next(at + 1)) {
      counted += static_cast<size_t>(idle_[g].count[at]);
      if (counted >= missing) break;
    }
    if (at < whole_at) {
      whole_at = at;
      stop.shape = g;
    }
  }
  // One agent reached first wins a tie: a walk checks it first.
  if (whole_at < stop.position) {
    stop.position = whole_at;
    const IndexSet& idle = idle_[stop.shape].set;
    for (int k = idle.First(); k >= 0 && k <= whole_at; k = idle.Next(k + 1))
      AgentsAt(k, idle_at_, stop.shape, stop.agents);
  } else {
    stop.shape = -1;
    if (stop.position != kNever) AgentsAt(stop.position, reach_at_, -1, stop.agents);
  }
  if (stop.position >= candidates_.end()) return std::nullopt;
  return stop;
}

int ReachIndex::Freed(int a, int position, std::vector<int>* victims) {
  const std::vector<int>& links = candidates_.LinksFor(need_);
  int freed = 0;
  for (const auto& [k, n] : candidates_.on_agent(a)) {
    if (k > position) break;
    if (links[k] != k || gone_[candidates_.at(k)] || !candidates_.admitted(k)) continue;
    freed += n;
    if (victims && (victims->empty() || victims->back() != k)) victims->push_back(k);
  }
  return freed;
}

}  // namespace ring::scheduling
