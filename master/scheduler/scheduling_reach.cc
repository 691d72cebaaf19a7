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
  for (size_t g = 0; g < divides_.size(); ++g) {
    const int size = slots.shapes()[g].size;
    divides_[g] = need.whole_agents() && size < need.slots && need.slots % size == 0;
  }
  for (int a = 0; a < slots.agent_count(); ++a) Update(a);
}

std::pair<int, int> ReachIndex::Positions(int a) {
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
  const auto [reach, idle] = slots_.usable(a) ? Positions(a) : std::pair<int, int>{kNever, kNever};
  const int g = slots_.shape(a);
  // Most updates move nothing: the sets are touched only when a key changes.
  if (reach != reach_at_[a]) {
    if (reach_at_[a] != kNever) reach_.erase({reach_at_[a], a});
    if (reach != kNever) reach_.insert({reach, a});
    reach_at_[a] = reach;
  }
  if (idle != idle_at_[a]) {
    if (idle_at_[a] != kNever) idle_[g].erase({idle_at_[a], a});
    if (idle != kNever) idle_[g].insert({idle, a});
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

std::optional<ReachIndex::Stop> ReachIndex::Find() {
  Sync();
  Stop stop;
  if (!reach_.empty()) stop.position = reach_.begin()->first;
  // A whole-agent fit completes when its last missing agent becomes idle;
  // the largest shape first when several complete at the same candidate.
  int whole_at = kNever;
  for (int g = 0; g < static_cast<int>(idle_.size()); ++g) {
    if (!divides_[g] || idle_[g].empty()) continue;
    const size_t wanted = static_cast<size_t>(need_.slots / slots_.shapes()[g].size);
    const size_t have = slots_.idle(g).size() + slots_.idle_when_left(g).size();
    const size_t missing = have >= wanted ? 1 : wanted - have;
    if (idle_[g].size() < missing) continue;
    const int at = std::next(idle_[g].begin(), static_cast<std::ptrdiff_t>(missing - 1))->first;
    if (at < whole_at) {
      whole_at = at;
      stop.shape = g;
    }
  }
  // One agent reached first wins a tie: a walk checks it first.
  if (whole_at < stop.position) {
    stop.position = whole_at;
    for (const auto& [k, a] : idle_[stop.shape]) {
      if (k > whole_at) break;
      stop.agents.push_back(a);
    }
  } else {
    stop.shape = -1;
    for (const auto& [k, a] : reach_) {
      if (k > stop.position) break;
      stop.agents.push_back(a);
    }
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
