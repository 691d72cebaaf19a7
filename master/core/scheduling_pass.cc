#include "master/core/scheduling_pass.h"

#include <algorithm>
#include <numeric>

#include "master/core/scheduling_reasons.h"

namespace ring::scheduling {

PoolPass::PoolPass(const PoolInput& input)
    : input_(input),
      slots_(input.agents),
      where_(input.running.size()),
      gone_(input.running.size(), 0),
      search_(slots_, where_, gone_),
      leaving_on_(slots_.agent_count()),
      state_(input.pending.size()) {
  for (size_t i = 0; i < input.running.size(); ++i) {
    const auto& r = input.running[i];
    capped_[r.experiment_id] += r.slots;
    if (!r.preempting) staying_[r.experiment_id] += r.slots;
    for (const auto& p : r.placements)
      where_[i].push_back({slots_.Find(p.agent_id), static_cast<int>(p.slot_ids.size())});
  }
  // Allocations already stopping, oldest first, so reasons name them stably.
  std::vector<int> stopping;
  for (int i = 0; i < static_cast<int>(input.running.size()); ++i)
    if (input.running[i].preempting) stopping.push_back(i);
  std::sort(stopping.begin(), stopping.end(), [&](int x, int y) {
    const auto& a = input.running[x];
    const auto& b = input.running[y];
    return a.started_seq != b.started_seq ? a.started_seq < b.started_seq : a.allocation_id < b.allocation_id;
  });
  for (int i : stopping) MarkGone(i);
}

int PoolPass::CappedSlots(int64_t experiment) const {
  auto it = capped_.find(experiment);
  return it == capped_.end() ? 0 : it->second;
}

int PoolPass::StayingSlots(int64_t experiment) const {
  auto it = staying_.find(experiment);
  return it == staying_.end() ? 0 : it->second;
}

void PoolPass::MarkGone(int i) {
  gone_[i] = 1;
  for (const auto& [a, n] : where_[i]) {
    if (a < 0) continue;
    slots_.AddLeaving(a, n);
    leaving_on_[a].push_back(i);
  }
}

void PoolPass::Consider(int p) {
  order_.push_back(p);
}

void PoolPass::SetReason(int p, std::string reason) {
  state_[p].reason = std::move(reason);
}

bool PoolPass::Admissible(int p) {
  const auto& r = request(p);
  const std::string& pool = input_.pool;
  if (r.slots > 0 && input_.agents.empty()) {
    SetReason(p, "no agents in pool " + pool);
    return false;
  }
  auto it = never_fits_.find(r.slots);
  if (it == never_fits_.end())
    it = never_fits_.emplace(r.slots, NeverFitsIn(input_.agents, r.slots, pool)).first;
  if (it->second) {
    SetReason(p, *it->second);
    return false;
  }
  if (slots_.enabled_agents() == 0) {
    SetReason(p, "no enabled agents in pool " + pool);
    return false;
  }
  if (r.max_slots && CappedSlots(r.experiment_id) + r.slots > *r.max_slots) {
    SetReason(p, MaxSlotsReason(r.slots, *r.max_slots));
    return false;
  }
  return true;
}

bool PoolPass::PlaceNow(int p) {
  const auto& r = request(p);
  auto fit = slots_.FitNow(r.slots, input_.policy.fit);
  if (!fit) return false;
  decision_.assignments.push_back(slots_.Take(*fit, r.slots, r.allocation_id));
  capped_[r.experiment_id] += r.slots;
  staying_[r.experiment_id] += r.slots;
  state_[p] = {Outcome::kAssigned, false, {}};
  return true;
}

void PoolPass::Promise(int p, const Fit& fit) {
  const auto& r = request(p);
  std::vector<std::string> waiting_for;
  for (int a : fit.agents) {
    slots_.Hold(a);
    for (int i : leaving_on_[a]) {
      const auto& id = input_.running[i].allocation_id;
      if (std::find(waiting_for.begin(), waiting_for.end(), id) == waiting_for.end())
        waiting_for.push_back(id);
    }
  }
  capped_[r.experiment_id] += r.slots;
  staying_[r.experiment_id] += r.slots;
  state_[p] = {Outcome::kPromised, true, WaitingReason(waiting_for)};
}

bool PoolPass::WaitForLeaving(int p) {
  auto fit = slots_.FitWhenLeft(request(p).slots, input_.policy.fit);
  if (!fit) return false;
  Promise(p, *fit);
  return true;
}

bool PoolPass::Preempt(int p, Candidates& candidates,
                       const std::function<VictimSearch::Verdict(int)>& admit) {
  const auto& r = request(p);
  auto choice = search_.Find(r.slots, input_.policy.fit, candidates, admit);
  if (!choice) return false;
  for (int v : choice->victims) {
    const auto& victim = input_.running[v];
    MarkGone(v);
    staying_[victim.experiment_id] -= victim.slots;
    decision_.preempt.push_back(victim.allocation_id);
    decision_.preempted_for[victim.allocation_id] = r.allocation_id;
  }
  Promise(p, choice->fit);
  return true;
}

bool PoolPass::HoldFor(int p) {
  const int need = request(p).slots;
  std::vector<int> hold;
  if (need <= slots_.max_enabled_size()) {
    // The usable agent large enough with the most free slots, lowest id first.
    int best = -1;
    const auto& by_free = slots_.by_free();
    for (auto it = by_free.rbegin(); it != by_free.rend(); ++it) {
      if (best >= 0 && it->first < slots_.free(best)) break;
      if (slots_.total(it->second) >= need && (best < 0 || it->second < best)) best = it->second;
    }
    if (best >= 0) hold.push_back(best);
  } else {
    // Whole agents: the largest dividing shape with enough usable agents;
    // of those, the ones with the most free slots, lowest id first.
    const auto& shapes = slots_.shapes();
    for (int g = 0; g < static_cast<int>(shapes.size()) && hold.empty(); ++g) {
      const int size = shapes[g].size;
      if (size >= need || need % size != 0) continue;
      std::vector<int> members;
      for (int a = 0; a < slots_.agent_count(); ++a)
        if (slots_.shape(a) == g && slots_.usable(a)) members.push_back(a);
      const size_t k = static_cast<size_t>(need / size);
      if (members.size() < k) continue;
      std::stable_sort(members.begin(), members.end(),
                       [&](int x, int y) { return slots_.free(x) > slots_.free(y); });
      members.resize(k);
      if (std::none_of(members.begin(), members.end(), [&](int a) { return slots_.free(a) > 0; })) break;
      hold = std::move(members);
    }
  }
  for (int a : hold) slots_.Hold(a);
  state_[p].holder = !hold.empty();
  return !hold.empty();
}

PoolDecision PoolPass::Finish(bool by_priority) {
  const int largest_free = slots_.LargestFreeBlock();
  const auto idle = slots_.IdleEnabledPerShape();
  std::map<int, std::string> shape_reasons;  // by request size
  int holders_ahead = 0;
  int same_priority_holders = 0;  // by_priority: holders ahead of the request's own priority
  std::optional<int> level;
  for (int p : order_) {
    const auto& r = request(p);
    auto& s = state_[p];
    if (level != r.priority) {
      level = r.priority;
      same_priority_holders = 0;
    }
    if (s.outcome != Outcome::kAssigned) {
      if (s.reason.empty()) {
        if (holders_ahead > 0 && FitsPhysically(slots_, idle, largest_free, r.slots)) {
          s.reason = BehindReason(holders_ahead, by_priority && same_priority_holders == 0);
        } else {
          // The same for every request of a size: built once.
          auto it = shape_reasons.find(r.slots);
          if (it == shape_reasons.end())
            it = shape_reasons.emplace(r.slots, ShapeReason(slots_, idle, largest_free, r.slots, input_.pool))
                     .first;
          s.reason = it->second;
        }
      }
      decision_.pending_reasons[r.allocation_id] = s.reason;
    }
    if (s.holder) {
      ++holders_ahead;
      ++same_priority_holders;
    }
  }
  decision_.order.reserve(order_.size());
  for (int p : order_) decision_.order.push_back(request(p).allocation_id);
  return std::move(decision_);
}

}  // namespace ring::scheduling
